"""The release matrix: file format, loader errors, overlays, the shipped snapshot, show and validate."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import MatrixError
from compat.maintain.validate import validate_matrix
from compat.matrix import shipped_matrix_dir
from compat.matrix._toml import Table, read_toml
from compat.matrix.releases import TRACKED, ReleaseIndex, emit_releases, parse_releases_file, toml_string
from compat.model.unknown import Unknown
from tests.support.matrix import shipped_validation

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SHIPPED = shipped_matrix_dir() / "releases"

GOOD = """
package = "demo"
source = "release metadata"

[[release]]
version = "1.0.0"
uploaded = "2024-01-02"
requires_python = ">=3.9"
requires = ["torch==2.5.1", 'vllm>=0.7; extra == "vllm"']
extras = ["vllm"]

[[release]]
version = "0.9.0"
uploaded = "2023-12-01"
yanked = true
yanked_reason = "broken"
requires_unknown = "sdist-only"
"""


def parse(text: str, name: str = "demo"):
    return parse_releases_file(Table(tomllib.loads(text), file=f"releases/{name}.toml", path=""), expected=name)


@given(st.text())
def test_toml_string_round_trips_any_text(text):
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


def test_parse_and_emit_round_trip():
    demo = parse(GOOD)
    assert [str(r.version) for r in demo.releases] == ["0.9.0", "1.0.0"]  # oldest first whatever the file order
    old, new = demo.releases
    assert old.yanked and old.yanked_reason == "broken"
    assert old.requires is None and old.requires_unknown == Unknown(reason="sdist-only")
    assert [str(r) for r in new.requires_of("vllm")] == ['vllm>=0.7; extra == "vllm"']
    text = emit_releases(demo)
    again = parse(text)
    assert again.releases == demo.releases
    assert emit_releases(again) == text  # a fixed point: a refresh with nothing new rewrites nothing


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (('version = "1.0.0"', 'version = "1.0"\nversion2 = 1'), "release[0].version2: unknown key"),
        (('version = "1.0.0"', 'version = "one"'), "release[0].version: 'one' is not a version"),
        (('version = "1.0.0"', 'version = "1.1.0rc1"'), "release[0].version: 1.1.0rc1 is a pre-release"),
        (('version = "0.9.0"', 'version = "1.0.0"'), "release[1].version: 1.0.0 is already release[0]"),
        (('uploaded = "2024-01-02"', 'uploaded = "Jan 2"'), "release[0].uploaded: 'Jan 2' is not a date"),
        (('requires_python = ">=3.9"', 'requires_python = "three"'), "release[0].requires_python"),
        (('requires_unknown = "sdist-only"', 'requires_unknown = "sdist-only"\nrequires = []'), "release[1].requires_unknown: give requires"),
        (('yanked = true\n', ''), "release[1].yanked_reason: given for a release that is not yanked"),
        (('package = "demo"', 'package = "Demo"'), "package: 'Demo' is not a canonical name"),
        (('package = "demo"', 'package = "other"'), "package: 'other' does not match the file name"),
    ],
)
def test_errors_name_the_file_and_the_key(edit, where):
    with pytest.raises(MatrixError) as info:
        parse(GOOD.replace(*edit, 1))
    assert str(info.value).startswith("releases/demo.toml: ")
    assert where in str(info.value)


def test_a_bad_requirement_names_the_file_and_key_when_parsed():
    demo = parse(GOOD.replace('"torch==2.5.1"', '"torch=2.5.1"'))
    with pytest.raises(MatrixError, match=r"^releases/demo.toml: release\[0\].requires\[0\]: 'torch=2.5.1' is not a PEP 508"):
        _ = demo.find("1.0.0").requires


def test_overlay_adds_versions_and_packages_and_rejects_duplicates(tmp_path):
    base, extra = tmp_path / "base", tmp_path / "extra"
    base.mkdir(), extra.mkdir()
    (base / "demo.toml").write_text(GOOD)
    (extra / "demo.toml").write_text('package = "demo"\nsource = "internal build"\n[[release]]\nversion = "1.0.1"\nrequires = []\n')
    (extra / "inhouse.toml").write_text(GOOD.replace('"demo"', '"inhouse"'))
    index = ReleaseIndex([base, extra])
    assert index.packages() == ("demo", "inhouse")
    demo = index.get("Demo")
    assert [str(r.version) for r in demo.releases] == ["0.9.0", "1.0.0", "1.0.1"]
    assert isinstance(demo.find("1.0.1").uploaded, Unknown)
    (extra / "demo.toml").write_text('package = "demo"\nsource = "x"\n[[release]]\nversion = "1.0.0"\nrequires = []\n')
    with pytest.raises(MatrixError, match=r"extra/demo.toml: release 1.0.0: already defined in matrix/releases/demo.toml"):
        ReleaseIndex([base, extra]).get("demo")
    assert ReleaseIndex([base]).get("absent") is None


# --- the shipped snapshot -----------------------------------------------------------------------


def test_every_tracked_package_is_shipped_up_to_today():
    index = ReleaseIndex([SHIPPED])
    assert set(index.packages()) == set(TRACKED)
    latest = {name: str(index.get(name).latest().version) for name in ("trl", "vllm", "torch", "transformers", "accelerate")}
    assert latest == {"trl": "1.16.0", "vllm": "0.33.0", "torch": "2.15.0", "transformers": "5.23.0", "accelerate": "1.15.0"}
    for package in index.all():
        assert not any(r.version.is_prerelease for r in package.releases), package.package


def test_shipped_files_are_in_the_emitter_format():
    """Byte-for-byte what the emitter writes: a refresh diff shows only upstream changes."""
    from compat.maintain.refresh import HEADER

    for path in sorted(SHIPPED.glob("*.toml")):
        package = parse_releases_file(read_toml(path), expected=path.stem)
        assert emit_releases(package, header=HEADER) == path.read_text(encoding="utf-8"), path.name


def show_json(package: str) -> dict:
    result = CliRunner().invoke(app, ["matrix", "show", package, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_show_json_agrees_with_the_real_metadata():
    vllm = show_json("vllm")
    assert vllm["schema_version"] == 1 and vllm["package"] == "vllm"
    by_version = {r["version"]: r for r in vllm["releases"]}
    assert "torch==2.5.1" in by_version["0.7.2"]["requires"]
    assert by_version["0.7.2"]["requires_python"] == ">=3.9"
    assert "transformers<5.21.0,>=5.16.1" in by_version["0.33.0"]["requires"]
    assert "torch==2.14.0" in by_version["0.33.0"]["requires"]
    trl = {r["version"]: r for r in show_json("trl")["releases"]}
    assert 'vllm==0.7.2; sys_platform != "win32" and extra == "vllm"' in trl["0.15.2"]["requires"]
    assert "accelerate>=1.10.1" in trl["1.16.0"]["requires"]
    flash = {r["version"]: r for r in show_json("flash-attn")["releases"]}
    assert flash["2.8.3.post2"]["requires"] is None and flash["2.8.3.post2"]["requires_unknown"] == "sdist-only"


def test_show_json_is_sorted_and_deterministic():
    first = CliRunner().invoke(app, ["matrix", "show", "trl", "--json"]).stdout
    assert first == CliRunner().invoke(app, ["matrix", "show", "trl", "--json"]).stdout
    assert first == json.dumps(json.loads(first), sort_keys=True, indent=2) + "\n"


def test_show_table_for_vllm_and_trl():
    vllm = CliRunner().invoke(app, ["matrix", "show", "vllm", "--since", "0.33.0"])
    assert vllm.exit_code == 0
    row = next(line for line in vllm.stdout.splitlines() if "0.33.0" in line)
    assert "==2.14.0" in row and "<5.21.0,>=5.16.1" in row and ">=3.11" in row
    assert "0.32.0" not in vllm.stdout
    trl = CliRunner().invoke(app, ["matrix", "show", "trl", "--since", "1.16.0"])
    assert "[vllm]" in trl.stdout
    row = next(line for line in trl.stdout.splitlines() if "1.16.0" in line)
    assert "<=0.31.0,>=0.22.0" in row and ">=1.10.1" in row


def test_show_unknown_package_is_a_one_line_error():
    from compat.cli import main

    result = CliRunner().invoke(app, ["matrix", "show", "numpy"])
    assert result.exit_code != 0
    assert "no releases recorded for 'numpy'" in str(result.exception)
    bad = CliRunner().invoke(app, ["matrix", "show", "vllm", "--since", "soon"])
    assert "--since: 'soon' is not a version" in str(bad.exception)
    assert main  # the entry point turns CompatError into one line + exit 2 (tests/cli covers it)


# --- validate ----------------------------------------------------------------------------------


def test_shipped_release_files_validate():
    result = shipped_validation()
    # The other parts of the shipped matrix have their own owners and tests; here: the releases
    # files and every reference into them (torch.toml versions, fix.requires met by a release).
    mine = [p for p in result.problems if "releases/" in p or "no recorded" in p or "not a torch release" in p]
    assert mine == []
    assert result.packages == len(TRACKED) and result.releases > 1200


def test_validate_reports_every_broken_file_with_file_and_key(tmp_path):
    overlay = tmp_path / "company"
    (overlay / "releases").mkdir(parents=True)
    (overlay / "signatures").mkdir()
    (overlay / "releases" / "vllm.toml").write_text('package = "vllm"\nsource = "ours"\n[[release]]\nversion = "0.7.2"\nrequires = []\n')
    (overlay / "releases" / "inhouse.toml").write_text('package = "inhouse"\nsource = "ours"\n[[release]]\nversion = "x"\n')
    (overlay / "signatures" / "ours.toml").write_text(
        """
[[signature]]
id = "ours-numpy"
title = "t"
severity = "error"
patterns = ["boom"]
when = { packages = { numpy = ">=2" } }
fix = { requires = ["trl>=99"] }
cause = "c"
refs = ["acme/repo#1"]
"""
    )
    result = validate_matrix([overlay], audit_patterns=False)
    text = "\n".join(result.problems)
    assert f"{overlay}/releases/vllm.toml: release 0.7.2: already defined in matrix/releases/vllm.toml" in text
    assert f"{overlay}/releases/inhouse.toml: release[0].version: 'x' is not a version" in text
    assert "not a tracked package" not in text  # `when` may name any installed package (numpy here)
    assert "signatures/ours.toml: signature[ours-numpy].fix.requires[0]: no recorded trl release satisfies 'trl>=99'" in text

    cli = CliRunner().invoke(app, ["matrix", "validate", str(overlay), "--no-audit"])
    assert cli.exit_code == 2
    assert "no recorded trl release satisfies 'trl>=99'" in cli.stderr


def test_validate_a_directory_alone(tmp_path):
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / "demo.toml").write_text(GOOD)
    cli = CliRunner().invoke(app, ["matrix", "validate", str(tmp_path), "--alone", "--no-audit"])
    assert cli.exit_code == 0, cli.output
    assert "1 packages, 2 releases" in cli.stdout
