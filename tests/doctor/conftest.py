from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from compat.cli import app
from tests.fakeenv import make_env


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
