"""Terminal manners: the terminal's width, NO_COLOR and FORCE_COLOR, completion, help, one-line errors."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.sources.terminal import DEFAULT_WIDTH, terminal_style
from tests.support.main import compat_main
from tests.support.paths import FACTS_300


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("env", "tty", "color"), [
    ({}, False, False),
    ({}, True, True),
    ({"TERM": "dumb"}, True, False),
    ({"NO_COLOR": "1"}, True, False),
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": "0"}, True, False),
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False, False),  # NO_COLOR wins
    ({"NO_COLOR": ""}, True, True),  # set but empty: ignored, as no-color.org says
])
def test_colour(env, tty, color):
    assert terminal_style(_Tty() if tty else io.StringIO(), env).color is color


def test_width():
    assert terminal_style(io.StringIO(), {}).width == DEFAULT_WIDTH  # a pipe: stable logs
    assert terminal_style(io.StringIO(), {"COLUMNS": "72"}).width == 72
    assert terminal_style(io.StringIO(), {"COLUMNS": "10"}).width == 40  # floor
    assert terminal_style(io.StringIO(), {"COLUMNS": "wide"}).width == DEFAULT_WIDTH


def _compat(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`compat ARGS` as into a pipe, through compat's own `main` in this process (width and colour are read from the
    environment and the stream at each call, not at start-up; a child cost 0.3 s of CPU more)."""
    unset: dict[str, str | None] = {"NO_COLOR": None, "FORCE_COLOR": None, "COLUMNS": None}
    done = compat_main(*args, env={**unset, **env}, cwd=FACTS_300.parent)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_doctor_follows_columns_and_force_color():
    narrow = _compat("doctor", "--no-config", "--facts", str(FACTS_300), COLUMNS="60")
    assert narrow.returncode == 1
    assert "\x1b[" not in narrow.stdout
    colored = _compat("doctor", "--no-config", "--facts", str(FACTS_300), FORCE_COLOR="1").stdout
    assert "\x1b[" in colored
    plain = re.sub(r"\x1b\[[0-9;]*m", "", colored)  # a pipe without COLUMNS: 100 columns
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60 < max(len(line) for line in plain.splitlines()) <= 100
    assert "\x1b[" not in _compat("doctor", "--no-config", "--facts", str(FACTS_300), FORCE_COLOR="1", NO_COLOR="1").stdout


def test_matrix_show_follows_columns_and_stays_wide_in_a_pipe():
    narrow = _compat("matrix", "show", "trl", COLUMNS="70").stdout
    wide = _compat("matrix", "show", "trl").stdout  # a pipe: the table's own width, not 100 columns
    assert max(len(line) for line in narrow.splitlines()) <= 70 < max(len(line) for line in wide.splitlines())
    assert wide == _compat("matrix", "show", "trl", COLUMNS="400").stdout  # nothing folded in a pipe
    assert not [line for line in wide.splitlines() if line != line.rstrip()]


def test_doctor_groups_findings_by_severity():
    out = _compat("doctor", "--no-config", "--facts", str(FACTS_300)).stdout
    assert out.index("Errors (2)") < out.index("✗ error") < out.index("Cannot check (1)")
    assert "Warnings (" not in out or out.index("Errors (2)") < out.index("Warnings (")


@pytest.mark.parametrize("args", [
    ("doctor", "--bogus"),
    ("doctor", "--fail-on", "fatal"),
    ("lock",),
    ("matrix", "show"),
    ("doctor", "--facts", "/nonexistent/facts.json"),
])
def test_errors_are_one_line(args):
    proc = _compat(*args)
    assert proc.returncode == 2
    assert re.fullmatch(r"compat: error: [^\n]+\n", proc.stderr), proc.stderr
    assert proc.stdout == ""


COMMANDS = [(), ("doctor",), ("report",), ("facts",), ("explain",), ("lock",), ("plan",), ("matrix",),
            ("matrix", "show"), ("matrix", "validate"), ("matrix", "refresh"), ("matrix", "site"), ("matrix", "api"), ("fleet",), ("smoke",)]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "compat")
def test_help_names_no_python_types(command):
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert not re.search(r"<(str|int|float|bool|list\[[^>]*\]|path|[a-z]+ range)>", result.stdout), result.stdout


def test_completion_is_enabled(monkeypatch):
    result = CliRunner().invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout
    # typer detects the user's shell from the process's ancestors; a test run with no shell above it (nohup, a CI
    # runner, an orphaned worker) detects none and exits 1. typer's own switch makes --show-completion take the
    # shell as its value instead, so the script asked for does not depend on how the suite was started.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    shown = CliRunner().invoke(app, ["--show-completion", "bash"], prog_name="compat")
    assert "complete -o default -F _compat_completion compat" in shown.stdout
    # what the shell asks when the user types `compat doc<TAB>`
    completed = CliRunner().invoke(app, [], prog_name="compat",
                                   env={"_COMPAT_COMPLETE": "complete_bash", "COMP_WORDS": "compat doc", "COMP_CWORD": "1"})
    assert completed.stdout == "doctor\n"


@pytest.mark.parametrize(("argv", "code", "stream", "pattern"), [
    (["doctor", "--bogus"], 2, "err", r"compat: error: No such option: --bogus.*\(see 'compat doctor --help'\)\n"),
    (["doctor", "--facts", "/nonexistent.json"], 2, "err", r"compat: error: cannot read /nonexistent.json: .*\n"),
    ([], 2, "out", r"Usage: compat \[OPTIONS\] COMMAND"),
    (["--version"], 0, "out", r"compat \d+\.\d+\.\d+\n"),
    (["facts", "--short", "--facts", str(FACTS_300)], 0, "out", r"Python +3\.11\.9"),
])
def test_main_exit_codes_and_messages(monkeypatch, capsys, argv, code, stream, pattern):
    from compat.cli import main

    monkeypatch.setattr(sys, "argv", ["compat", *argv])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == code
    captured = capsys.readouterr()
    assert re.match(pattern, captured.err if stream == "err" else captured.out, re.S)
