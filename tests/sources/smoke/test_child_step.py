"""The smoke child's step boundary: a library's failure or sys.exit() is the step's failure;
Ctrl-C is not swallowed. The child is loaded by path, as compat runs it (it imports nothing of compat)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.paths import ROOT

CHILD = ROOT / "compat" / "sources" / "smoke" / "child.py"


@pytest.fixture
def child(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_PROCESS_INDEX", raising=False)
    spec = importlib.util.spec_from_file_location("compat_smoke_child_under_test", CHILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.FAILED.clear()  # the steps' record lives in child_steps, imported once per test process
    return module


def _reports(out: str) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("@@compat-smoke ")]


@pytest.mark.parametrize("error", [RuntimeError("CUDA error: no kernel image"), SystemExit(3)])
def test_a_failure_or_an_exit_in_a_step_is_the_steps_failure(child, capsys, error):
    with child.step("import"):
        raise error
    (report,) = _reports(capsys.readouterr().out)
    assert report["name"] == "import" and report["status"] == "fail"
    assert report["detail"].startswith(type(error).__name__)
    assert child.FAILED == ["import"]


def test_ctrl_c_in_a_step_ends_the_run(child, capsys):
    with pytest.raises(KeyboardInterrupt), child.step("train"):
        raise KeyboardInterrupt
    assert _reports(capsys.readouterr().out) == []


def test_a_launched_rank_leaves_without_finalizers_and_a_plain_child_runs_them(tmp_path):
    """A rank's teardown after its peer left can hang for ever (gloo's run-loop join in the DDP reducer's
    destructor): a rank a launcher started ends with its code once its output is flushed, running no finalizer."""
    import os
    import subprocess
    import sys

    code = (
        "import atexit, importlib.util, sys, time\n"
        f"spec = importlib.util.spec_from_file_location('child', {str(CHILD)!r})\n"
        "child = importlib.util.module_from_spec(spec); spec.loader.exec_module(child)\n"
        "atexit.register(lambda: (print('finalized', flush=True), time.sleep(float(sys.argv[1]))))\n"
        "print('steps printed')\n"
        "child._end(3)\n"
    )
    base = {k: v for k, v in os.environ.items() if k not in ("LOCAL_RANK", "RANK")}
    launched = subprocess.run([sys.executable, "-c", code, "600"], env={**base, "LOCAL_RANK": "1"}, capture_output=True,
                              text=True, timeout=60)
    assert launched.returncode == 3 and launched.stdout == "steps printed\n"
    plain = subprocess.run([sys.executable, "-c", code, "0"], env=base, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 3 and plain.stdout == "steps printed\nfinalized\n"
