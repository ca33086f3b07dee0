"""The commands end to end on a saved snapshot: what they print and how they exit.

Matrix-dependent answers (which versions a plan picks) are not pinned here; the shape is.
"""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from compat import __version__
from compat.cli import app, main
from tests.support.paths import GOLDEN

SNAPSHOT = GOLDEN / "facts-h100.json.txt"


def _run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_facts_prints_the_snapshot_it_was_given():
    result = _run("facts", "--facts", str(SNAPSHOT))
    assert result.exit_code == 0
    assert result.stdout == SNAPSHOT.read_text(encoding="utf-8")


def test_doctor_text_on_a_snapshot_ends_with_the_summary():
    result = _run("doctor", "--facts", str(SNAPSHOT))
    json_result = _run("doctor", "--json", "--facts", str(SNAPSHOT))
    report = json.loads(json_result.stdout)
    assert result.exit_code == json_result.exit_code == (1 if report["summary"]["error"] else 0)
    assert result.stdout.startswith("Judging /opt/venv/bin/python (as recorded in the facts)\nPython    3.11.9 (cpython)")
    assert "\x1b[" not in result.stdout  # not a terminal: no colour
    found = [f for f in report["findings"] if f["status"] == "found"]
    for f in found:
        assert f"[{f['id']}]" in result.stdout


def test_plan_installs_torch_first_and_exits_1_when_there_are_steps():
    # One resolution only (they take seconds); the text form has golden files in tests/resolve.
    result = _run("plan", "--facts", str(SNAPSHOT), "--installer", "uv", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["steps"] and all(s["command"][:3] == ["uv", "pip", "install"] for s in doc["steps"])
    assert doc["steps"][0]["kind"] == "torch"
    assert any(p.startswith("torch==") for p in doc["steps"][0]["packages"])


def test_plan_with_no_compatible_set_lists_the_causes_on_stderr():
    result = _run("plan", "vllm==0.7.2", "torch==2.6.0", "--facts", str(SNAPSHOT))
    assert result.exit_code == 4  # distinct from 1 (steps to run) and 3 (a bug in compat)
    assert result.stdout == ""
    assert result.stderr.startswith("compat: no compatible set for vllm==0.7.2 torch==2.6.0")
    assert "\n  - " in result.stderr


def test_version():
    result = _run("--version")
    assert (result.exit_code, result.stdout) == (0, f"compat {__version__}\n")


def test_main_turns_a_compat_error_into_exit_2(monkeypatch, capsys, tmp_path):
    bad = tmp_path / "facts.json"
    bad.write_text("{")
    monkeypatch.setattr(sys, "argv", ["compat", "facts", "--facts", str(bad)])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("compat: error: ") and "not JSON" in err
