"""compat's environment variables are read in one place, into a Settings record."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.sources.settings import Settings, read_settings


def test_defaults_live_under_the_home_directory(tmp_path):
    assert read_settings({}, home=tmp_path) == Settings(cache_dir=tmp_path / ".cache" / "compat", index_url=None)


def test_xdg_cache_home_then_compat_cache_dir_win():
    assert read_settings({"XDG_CACHE_HOME": "/x"}).cache_dir == Path("/x/compat")
    both = {"XDG_CACHE_HOME": "/x", "COMPAT_CACHE_DIR": "/c"}
    assert read_settings(both).cache_dir == Path("/c")
    assert read_settings({"COMPAT_CACHE_DIR": "  ", "XDG_CACHE_HOME": "/x"}).cache_dir == Path("/x/compat")


def test_compat_no_cache_turns_every_cache_off():
    assert read_settings({"COMPAT_NO_CACHE": "1", "COMPAT_CACHE_DIR": "/c"}).cache_dir is None
    assert read_settings({"COMPAT_NO_CACHE": ""}, home=Path("/h")).cache_dir == Path("/h/.cache/compat")


def test_pip_index_url_names_the_index():
    assert read_settings({"PIP_INDEX_URL": " https://mirror.example/simple/ "}).index_url == "https://mirror.example/simple/"
    assert read_settings({"PIP_INDEX_URL": ""}).index_url is None


def test_the_process_environment_is_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("COMPAT_NO_CACHE", raising=False)
    assert read_settings().cache_dir == tmp_path


def test_the_library_default_is_no_cache_and_the_public_index():
    assert Settings() == Settings(cache_dir=None, index_url=None)


def test_the_cli_passes_its_settings_to_the_matrix_loader(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from compat.cli import app

    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path / "on"))
    monkeypatch.delenv("COMPAT_NO_CACHE", raising=False)
    assert CliRunner().invoke(app, ["matrix", "show", "trl", "--json"]).exit_code == 0
    assert list((tmp_path / "on" / "parsed").glob("*.json"))
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path / "off"))
    monkeypatch.setenv("COMPAT_NO_CACHE", "1")
    assert CliRunner().invoke(app, ["matrix", "show", "trl", "--json"]).exit_code == 0
    assert not (tmp_path / "off").exists()


@pytest.mark.parametrize(("text", "seconds"), [("", None), ("  ", None), ("2.5", 2.5), ("86400", 86400.0)])
def test_the_search_bound_is_read_from_compat_search_seconds(text, seconds):
    assert read_settings({"COMPAT_SEARCH_SECONDS": text}, home=Path("/home/u")).search_seconds == seconds


@pytest.mark.parametrize("name", ["COMPAT_SEARCH_SECONDS", "COMPAT_TORCH_TIMEOUT"])
@pytest.mark.parametrize("text", ["abc", "soon", "0", "-1", "-5", "nan", "inf", "1e400", "9" * 5000])
def test_a_bad_number_of_seconds_is_a_one_line_usage_error(name, text):
    with pytest.raises(UsageError, match=rf"^{name}=.*expected seconds") as caught:
        read_settings({name: text}, home=Path("/home/u"))
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_compat_torch_timeout_is_a_positive_number_of_seconds_or_the_adaptive_default():
    assert read_settings({"COMPAT_TORCH_TIMEOUT": " 90 "}).torch_timeout == 90.0
    assert read_settings({"COMPAT_TORCH_TIMEOUT": ""}).torch_timeout is None


def test_compat_torch_load_asks_for_the_loading_child():
    assert read_settings({"COMPAT_TORCH_LOAD": "1"}).torch_load is True
    assert read_settings({"COMPAT_TORCH_LOAD": "0"}).torch_load is False
    assert read_settings({}).torch_load is False
