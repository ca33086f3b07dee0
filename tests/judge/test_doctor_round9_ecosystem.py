"""Doctor finds the round 9 ecosystem entries whose `when` is decidable from installed versions
(matrix/signatures/round9_ecosystem.toml), and the versions their fix names clear them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from tests.support.fakeenv import make_env

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"
runner = CliRunner()

BASE = {"torch": "2.9.0", "transformers": "4.57.1", "ray": "2.50.0"}

CASES = {
    # id: (packages that expose the run to it, packages that clear it)
    "megatron-core-modeltype-encoder-and-decoder-removed": (
        {**BASE, "megatron-core": "0.18.0", "mbridge": "0.15.1"},
        {**BASE, "megatron-core": "0.15.0", "mbridge": "0.15.1"},
    ),
}


def _found(tmp_path: Path, packages: dict[str, str]) -> set[str]:
    env = make_env(tmp_path, packages, deps=False)
    result = runner.invoke(app, ["doctor", "--json", "--python", str(env), "--gpus", "8xH100", "--driver", "570.86.15",
                                 "--launcher", "python", "--script", str(SCRIPTS / "online_dpo.py")])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = json.loads(result.stdout)
    return {f["id"] for f in report["findings"] if f["status"] == "found"}


@pytest.mark.parametrize("sid", sorted(CASES))
def test_found_where_exposed_and_cleared_by_the_fix(tmp_path: Path, sid: str) -> None:
    broken, fixed = CASES[sid]
    assert sid in _found(tmp_path / "broken", broken)
    assert sid not in _found(tmp_path / "fixed", fixed)
