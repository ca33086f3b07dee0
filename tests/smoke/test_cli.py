"""`compat smoke` from the command line: usage errors exit 2, and the budget bounds the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compat import api
from compat.model.smoke import Status


def _compat(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compat", "smoke", *args], capture_output=True, text=True, timeout=120)


def test_usage_errors_exit_2_with_one_line():
    bad = _compat("--trainer", "ppo")
    assert bad.returncode == 2 and "--trainer takes sft, dpo, grpo" in bad.stderr
    both = _compat("--json", "--format", "markdown")
    assert both.returncode == 2 and "--json and --format" in both.stderr


def test_facts_file_cannot_be_smoked(tmp_path):
    done = _compat("--facts", str(tmp_path / "x.json"))
    assert done.returncode == 2  # no such option: smoke runs an interpreter
    import pytest

    from compat.errors import UsageError

    with pytest.raises(UsageError, match="runs an interpreter"):
        api.smoke(api.SmokeRequest(environment=api.Environment(facts_file=Path("x.json"))))


def test_a_spent_budget_skips_every_stage_that_would_run_and_says_why():
    seen = []
    report = api.smoke(api.SmokeRequest(environment=api.Environment(python=Path(sys.executable)), budget=0.001),
                       seen.append)
    assert not report.failed
    assert [s.stage for s in seen] == [s.stage for s in report.stages]
    assert all(s.status is Status.SKIPPED for s in report.stages)
    import_stage = report.stages[0]
    assert import_stage.reason == "the budget of 0.001 s was spent before it started"
