"""`compat explain` end to end: files, stdin, gzip, JSON, exit codes, bad input."""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.printable import terminal_safe
from tests.support.paths import LOGS

runner = CliRunner()


def run(*args, input=None):
    result = runner.invoke(app, ["explain", *args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_file_json_best_first_exit_0():
    r = run("--no-env", "--json", str(LOGS / "reports" / "multirank-ddp-dtensor.log"))
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["known"] is True
    first = doc["matches"][0]
    assert first["id"] == "device-map-auto-silent-tensor-parallel"
    assert set(first) >= {"id", "title", "severity", "score", "lines", "cause", "fix"}
    assert first["fix"]["requires"] == ["transformers>=4.54.0"]
    assert first["lines"][0]["count"] == 8
    assert [m["score"] for m in doc["matches"]] == sorted((m["score"] for m in doc["matches"]), reverse=True)
    assert list(doc) == sorted(doc)


def test_stdin_and_nothing_known_exit_1():
    r = run("--no-env", "-", input=(LOGS / "negative" / "dataset-keyerror.log").read_text())
    assert r.exit_code == 1 and "No known signature" in r.stdout


def test_gzip_is_detected_by_content(tmp_path):
    gz = tmp_path / "train.log.gz"
    gz.write_bytes(gzip.compress((LOGS / "nccl-watchdog-timeout.log").read_bytes()))
    r = run("--no-env", "--top", "1", str(gz))
    assert r.exit_code == 0 and "nccl-watchdog-timeout" in r.stdout


@pytest.mark.parametrize("content", [b"", b"\x00\x00\x00", bytes(range(256)) * 100])
def test_hostile_input_gives_a_clear_answer(tmp_path, content):
    log = tmp_path / "x.log"
    log.write_bytes(content)
    r = run("--no-env", str(log))
    assert r.exit_code == 1 and "No known signature" in r.stdout


def test_truncated_gzip_and_missing_file_are_usage_errors(tmp_path):
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"hello\n" * 1000)[:40])
    from compat.errors import UsageError
    r = runner.invoke(app, ["explain", "--no-env", str(bad)])
    assert isinstance(r.exception, UsageError) and "cannot read" in str(r.exception)
    r = runner.invoke(app, ["explain", "--no-env", str(tmp_path / "missing.log")])
    assert "cannot read" in str(r.exception)


def test_facts_file_ranks_and_tailors(tmp_path):
    from compat.model.facts import dump_facts
    from tests.explain.test_explain import GRPO_VLLM, _facts
    facts = tmp_path / "facts.json"
    facts.write_text(dump_facts(_facts({"trl": "0.15.0", "vllm": "0.6.6", "torch": "2.5.1"}, script=GRPO_VLLM)))
    line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n"
    r = run("--json", "--facts", str(facts), "-", input=line)
    doc = json.loads(r.stdout)
    assert doc["matches"][0]["id"] == "grpo-vllm-device-mismatch"
    assert "you have vllm 0.6.6; the fix needs vllm==0.7.2" in doc["matches"][0]["fix"]["notes"]
    assert doc["matches"][0]["environment"]["outcome"] == "match"


def test_a_bad_facts_file_is_exit_2(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text("{not json")
    r = runner.invoke(app, ["explain", "--facts", str(facts), "-"], input="x\n")
    assert "not JSON" in str(r.exception)


def _explain_env(**env: str):
    base = {"COLUMNS": "", "FORCE_COLOR": "", "NO_COLOR": "", "TERM": "xterm"}
    result = runner.invoke(app, ["explain", "--no-env", str(LOGS / "cuda-driver-too-old.log")], env={**base, **env})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_text_wraps_to_columns_and_a_pipe_gets_whole_lines():
    piped = _explain_env()
    assert max(len(line) for line in piped.splitlines()) > 120  # the log line, whole, for grep
    narrow = _explain_env(COLUMNS="60")
    assert max(len(line) for line in narrow.splitlines()) <= 60
    assert " ".join(narrow.split()) == " ".join(piped.split())  # the same words, only wrapped


def test_force_color_colours_the_headings_and_no_color_wins():
    coloured = _explain_env(FORCE_COLOR="1")
    assert "\x1b[31m[error]\x1b[0m\x1b[1m torch was built" in coloured
    assert "\x1b[" not in _explain_env(FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in _explain_env()


def test_the_progress_bar_is_no_wider_than_standard_errors_terminal(monkeypatch):
    import io
    import os

    from compat.cli import explain as cli_explain

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            raise io.UnsupportedOperation

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("COLUMNS", "50")
    monkeypatch.setattr(os, "get_terminal_size", lambda *_: os.terminal_size((50, 20)))
    with cli_explain._progress("big.log", cli_explain.PROGRESS_MIN_BYTES) as advance:
        assert advance is not None
        advance(cli_explain.PROGRESS_MIN_BYTES // 2)
    assert err.getvalue()
    lines = [terminal_safe(line) for line in err.getvalue().replace("\r", "\n").splitlines()]
    assert any("log" in line for line in lines)
    assert max(len(line) for line in lines) <= 50
