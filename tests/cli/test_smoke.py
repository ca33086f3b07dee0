"""`compat smoke` from the command line: usage errors exit 2, and the budget bounds the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat import api
from compat.cli import app
from compat.model.smoke import Status
from tests.support.main import compat_main


def _compat(*args: str) -> subprocess.CompletedProcess[str]:
    """`compat smoke ARGS` through compat's `main` in this process (usage errors are main's, in any process)."""
    done = compat_main("smoke", *args)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_usage_errors_exit_2_with_one_line():
    bad = _compat("--trainer", "ppo")
    assert bad.returncode == 2 and "--trainer takes sft, dpo, grpo" in bad.stderr
    both = _compat("--json", "--format", "markdown")
    assert both.returncode == 2 and "--json and --format" in both.stderr


def test_a_missing_deepspeed_file_is_a_usage_error(tmp_path):
    done = _compat("--deepspeed", str(tmp_path / "ds.json"), "--budget", "10")
    assert done.returncode == 2 and f"--deepspeed {tmp_path / 'ds.json'}: No such file or directory" in done.stderr


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_deepspeed_path_that_is_no_regular_file_says_what_it_is(tmp_path, kind):
    path = tmp_path / "ds.json"
    path.mkdir() if kind == "directory" else os.mkfifo(path)
    done = _compat("--deepspeed", str(path), "--budget", "10")
    assert done.returncode == 2 and f"{'a directory' if kind == 'directory' else 'a FIFO'}" in done.stderr, done.stderr


def test_the_launch_settings_file_is_an_input_of_the_run(tmp_path):
    from compat.regular_file import forget_reads, was_read
    from compat.sources.smoke.run import launch_file

    path = tmp_path / "ds.json"
    path.write_text("{}")
    forget_reads()
    assert launch_file(path, "--deepspeed") == str(path.resolve())
    assert was_read(os.stat(path))  # so `-o ds.json` is refused rather than replacing it


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


def test_lock_verify_writes_nothing_when_the_set_does_not_install(tmp_path, monkeypatch):
    from compat.model.smoke import Verification

    def failing(request):
        return Verification(lock=api.lock(request.lock), install_error="uv: no wheel for torch==2.13.0", smoke=None, install_s=1.0)

    monkeypatch.setattr(api, "lock_verify", failing)
    out = tmp_path / "requirements.txt"
    result = CliRunner().invoke(app, ["lock", "trl", "--gpus", "cpu", "--python-version", "3.11", "--verify", "-o", str(out)])
    assert result.exit_code == 1 and not out.exists()
    assert "no wheel for torch==2.13.0" in result.stderr


def test_lock_verify_and_full_are_one_or_the_other():
    from compat.errors import UsageError

    result = CliRunner().invoke(app, ["lock", "trl", "--gpus", "cpu", "--python-version", "3.11", "--verify", "--full"])
    assert isinstance(result.exception, UsageError) and "--verify" in str(result.exception)  # main() makes it exit 2


def test_the_declared_launcher_reaches_the_request(monkeypatch):
    from compat.model.smoke import SmokeReport

    seen = []

    def record(request, progress=None):
        seen.append(request)
        return SmokeReport(python=sys.executable, stages=(), budget_s=request.budget, seconds=0.0, trainers=())

    monkeypatch.setattr(api, "smoke", record)
    result = CliRunner().invoke(app, ["smoke", "--launcher", "torchrun", "--budget", "10"])
    assert result.exit_code == 0, result.output
    assert seen[0].declared.launcher == "torchrun"


def test_the_declared_launcher_reaches_the_plan(monkeypatch):
    import pytest

    import compat.smoke.plan
    from compat.model.facts import Launcher

    seen = {}

    def record(env, **kwargs):
        seen.update(kwargs)
        raise LookupError("planned")

    monkeypatch.setattr(compat.smoke.plan, "plan_stages", record)
    with pytest.raises(LookupError, match="planned"):
        api.smoke(api.SmokeRequest(environment=api.Environment(python=Path(sys.executable)),
                                   declared=api.Declared(launcher="torchrun")))
    assert seen["launcher"] is Launcher.TORCHRUN


def test_only_the_stages_named_run_and_an_unknown_one_is_a_usage_error_before_the_probe(monkeypatch):
    import compat.api.stack
    import compat.sources.smoke.run
    from compat.errors import UsageError
    from compat.model.smoke import ChildOutput
    from tests.golden.inputs import h100_box

    def no_probe(*args, **kwargs):
        raise AssertionError("probed before the usage error")

    monkeypatch.setattr(compat.api.stack, "gather", no_probe)
    result = CliRunner().invoke(app, ["smoke", "--stages", "import,compile"])
    assert isinstance(result.exception, UsageError) and "--stages takes import, device" in str(result.exception)

    ran = []

    def run_stage(python, plan, **kwargs):
        ran.append(plan.stage)
        return (ChildOutput(command="c", returncode=0, stdout="", stderr="", seconds=0.0),)

    monkeypatch.setattr(compat.api.stack, "gather", lambda *args, **kwargs: h100_box())
    monkeypatch.setattr(compat.sources.smoke.run, "run_stage", run_stage)
    result = CliRunner().invoke(app, ["smoke", "--stages", "train,import", "--json"])
    assert result.exit_code == 0, result.output
    assert [s.value for s in ran] == ["import", "train"]
    skipped = {s["stage"]: s["reason"] for s in json.loads(result.stdout)["stages"] if s["status"] == "skipped"}
    assert skipped == dict.fromkeys(["device", "collective", "kernels", "serve"], "not chosen (--stages import,train)")
