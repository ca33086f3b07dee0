"""docs/contributing.md names real files and real commands: a module or test moved, or a command or option
renamed, without updating the page fails here."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "contributing.md"
TEXT = PAGE.read_text(encoding="utf-8")


def _shell_commands(text: str) -> list[str]:
    """The lines that start with `compat ` in the page's fenced sh blocks (the part before a comment)."""
    commands: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else stripped[3:]
        elif fence == "sh" and stripped.startswith("compat "):
            commands.append(stripped.split(" #", 1)[0].strip())
    return commands


COMMANDS = list(dict.fromkeys(_shell_commands(TEXT)))


@pytest.mark.parametrize("prefix", ["compat", "tests"])
def test_every_path_the_page_names_exists(prefix: str) -> None:
    paths = set(re.findall(rf"(?<![\w/]){prefix}/[\w/]+\.py", TEXT))
    assert len(paths) >= 5  # the pattern reads the page's paths
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_the_page_shows_commands() -> None:
    assert "compat matrix validate" in COMMANDS and len(COMMANDS) >= 4


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_parses(command: str) -> None:
    # --help is eager: click parses every word first (an unknown subcommand or option fails with exit 2) and then
    # prints the help of the command the words name, without running it or converting the option values.
    args = shlex.split(command)[1:]
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.output


def test_an_unknown_option_does_not_parse() -> None:
    result = CliRunner().invoke(app, ["matrix", "validate", "--no-such-option", "--help"])
    assert result.exit_code == 2
