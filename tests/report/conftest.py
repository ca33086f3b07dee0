from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app

DATA = Path(__file__).resolve().parent.parent / "data"
FACTS_300 = DATA / "envs" / "trl-vllm-300.facts.json"
"""A recorded TRL + vLLM environment on 8×H100 with 300 installed distributions (see tests/data/envs/SOURCE)."""


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
