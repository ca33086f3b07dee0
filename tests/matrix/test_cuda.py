"""matrix/cuda.toml: the shipped data, the driver rules, and the loader's errors."""

from pathlib import Path

import pytest
from packaging.version import Version

from compat.errors import MatrixError
from compat.matrix import load_matrix


@pytest.fixture(scope="module")
def cuda():
    return load_matrix().cuda


def test_every_row_has_a_source_and_the_toolkits_are_complete(cuda):
    assert all(tk.source.strip() for tk in cuda.toolkits)
    assert all(f.source.strip() for f in cuda.families)
    versions = [tk.version for tk in cuda.toolkits]
    expected = [f"11.{i}" for i in range(9)] + [f"12.{i}" for i in (0, 1, 2, 3, 4, 5, 6, 8, 9)] + [f"13.{i}" for i in range(4)]
    assert versions == expected  # sorted, and there is no CUDA 12.7
    drivers = [tk.min_driver for tk in cuda.toolkits]
    assert drivers == sorted(drivers)


@pytest.mark.parametrize(
    "major, floor", [(11, "450.80.02"), (12, "525.60.13"), (13, "580.65.06")]
)
def test_minor_version_compatibility_floors(cuda, major, floor):
    assert cuda.family(major).min_driver == Version(floor)


def test_unknown_family_is_none(cuda):
    assert cuda.family(14) is None


@pytest.mark.parametrize(
    "driver, top",
    [
        ("470.82.01", "11.4"),
        ("550.54.15", "12.4"),
        ("550.54.14", "12.4"),
        ("550.40.07", "12.3"),
        ("580.65.06", "13.0"),
        ("570.86.10", "12.8"),
        ("575.57.08", "12.9"),
        ("535.104.05", "12.2"),
        ("525.60.13", "12.0"),
        ("595.71.05", "13.2"),
        ("610.43.02", "13.3"),
        ("550.54", "12.3"),  # a version, not a branch: 550.54 < 550.54.14
        ("570.26", "12.8"),
        ("418.40.04", None),
    ],
)
def test_max_cuda(cuda, driver, top):
    assert cuda.max_cuda(driver) == top


def test_max_cuda_rejects_a_malformed_driver(cuda):
    with pytest.raises(ValueError, match="not a driver version"):
        cuda.max_cuda("55O.54")


@pytest.mark.parametrize(
    "version, driver", [("12.4", "550.54.14"), ("12.4.1", "550.54.14"), ("11.8", "520.61.05"), ("13.0", "580.65.06")]
)
def test_min_driver(cuda, version, driver):
    assert cuda.min_driver(version) == Version(driver)


def test_min_driver_of_an_uncurated_toolkit_is_none(cuda):
    assert cuda.min_driver("12.7") is None
    assert cuda.min_driver("14.0") is None


@pytest.mark.parametrize(
    "driver, runtime, verdict",
    [
        ("550.54.15", "12.4", "full"),
        ("550.54.15", "12.1", "full"),
        ("535.104.05", "12.4", "minor-compat"),  # R535 LTS + a cu124 wheel
        ("570.86.10", "12.9", "minor-compat"),
        ("550.54.15", "13.0", "no"),  # CUDA 13 wheels need R580+
        ("575.57.08", "13.0", "no"),
        ("580.65.06", "13.2", "minor-compat"),
        ("595.45.04", "13.2", "full"),
        ("470.82.01", "12.1", "no"),
        ("450.80.02", "11.8", "minor-compat"),
        ("450.51.06", "11.1", "no"),  # below the 11.x minor-compat floor
    ],
)
def test_driver_runs(cuda, driver, runtime, verdict):
    assert cuda.driver_runs(driver, runtime) == verdict


# --- loader errors ----------------------------------------------------------------------------


def _overlay(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cuda.toml").write_text(text, encoding="utf-8")
    return tmp_path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(MatrixError) as info:
        load_matrix([_overlay(tmp_path, text)])
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / "cuda.toml") in message
    return message


def test_broken_toml(tmp_path):
    assert "invalid TOML" in _error(tmp_path, "[[toolkit]\nversion = ")


def test_unknown_key(tmp_path):
    message = _error(tmp_path, '[[toolkit]]\nversion = "14.0"\nmin_drivr = "700.1"\nsource = "x"\n')
    assert "toolkit[0].min_drivr" in message and "unknown key" in message


def test_unknown_top_level_table(tmp_path):
    assert "toolkits: unknown key" in _error(tmp_path, '[[toolkits]]\nversion = "14.0"\n')


@pytest.mark.parametrize(
    "row, key",
    [
        ('version = "14"\nmin_driver = "700.1.1"', "toolkit[0].version"),
        ('version = "14.x"\nmin_driver = "700.1.1"', "toolkit[0].version"),
        ('version = "14.0"\nmin_driver = "seven hundred"', "toolkit[0].min_driver"),
        ('version = "14.0"\nmin_driver = 700', "toolkit[0].min_driver"),
    ],
)
def test_bad_values_name_the_key(tmp_path, row, key):
    assert key in _error(tmp_path, f'[[toolkit]]\n{row}\nsource = "x"\n')


def test_missing_source(tmp_path):
    assert "toolkit[0].source: missing" in _error(tmp_path, '[[toolkit]]\nversion = "14.0"\nmin_driver = "700.1.1"\n')


def test_duplicate_toolkit_across_an_overlay_names_both_files(tmp_path):
    message = _error(tmp_path, '[[toolkit]]\nversion = "12.4"\nmin_driver = "550.54.14"\nsource = "x"\n')
    assert "toolkit[0].version" in message
    assert "also defined at matrix/cuda.toml: toolkit[" in message


def test_duplicate_family_across_an_overlay(tmp_path):
    message = _error(tmp_path, '[[family]]\nmajor = 12\nmin_driver = "525.60.13"\nsource = "x"\n')
    assert "family[0].major" in message and "matrix/cuda.toml: family[1]" in message


def test_a_newer_toolkit_with_an_older_driver_is_a_typo(tmp_path):
    message = _error(tmp_path, '[[toolkit]]\nversion = "13.9"\nmin_driver = "560.1.1"\nsource = "x"\n')
    assert "toolkit[0].min_driver" in message and "older than CUDA 13.3" in message


def test_an_overlay_can_add_a_toolkit(tmp_path):
    cuda = load_matrix([_overlay(tmp_path, '[[toolkit]]\nversion = "13.4"\nmin_driver = "615.1.1"\nsource = "x"\n')]).cuda
    assert cuda.max_cuda("620.0.0") == "13.4"
    assert cuda.max_cuda("612.0.0") == "13.3"
