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
