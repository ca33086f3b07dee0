"""Fixtures more than one folder of the suite uses; tests/conftest.py registers this module as a plugin."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.matrix import shipped_matrix_dir
from compat.matrix.signatures import load_signature_dir
from tests.support.fakeenv import make_env


@pytest.fixture(scope="session")
def env(tmp_path_factory):
    """env(torch="2.5.1+cu124", vllm="0.7.2") → path of a python whose environment holds those."""
    made: dict[tuple, str] = {}

    def build(**packages: str) -> str:
        key = tuple(sorted(packages.items()))
        if key not in made:
            named = {name.replace("_", "-"): version for name, version in packages.items()}
            made[key] = str(make_env(tmp_path_factory.mktemp("env"), named))
        return made[key]

    return build


@pytest.fixture()
def doctor():
    """doctor(*args) → (exit code, parsed JSON report)."""
    runner = CliRunner()

    def run(*args: str):
        result = runner.invoke(app, ["doctor", "--json", *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, json.loads(result.stdout)

    return run


def ids(report: dict, status: str = "found") -> set[str]:
    return {f["id"] for f in report["findings"] if f["status"] == status}


@pytest.fixture(scope="session")
def catalog():
    """The shipped catalog alone (explain needs nothing else from the matrix)."""
    return SimpleNamespace(signatures=load_signature_dir(shipped_matrix_dir() / "signatures"))


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """cli(*args) → (exit code, stdout), run in an empty directory (so no config file is found by accident)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COMPAT_REPORT_URL", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
        result = runner.invoke(app, list(args), env=env)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, result.stdout

    return run
