"""Exit codes come from `compat.cli.exit_codes`: every --help states them from there, and the tables
in the README and docs agree with them (a changed code fails here, not in a user's CI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.cli.exit_codes import COMMAND_EXITS, ExitCode, codes, exit_code_help

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))

HELP = [
    ("doctor", ["doctor"]), ("explain", ["explain"]), ("lock", ["lock"]), ("plan", ["plan"]), ("fleet", ["fleet"]),
    ("facts", ["facts"]), ("report", ["report"]), ("matrix", ["matrix", "show"]), ("matrix", ["matrix", "validate"]),
    ("matrix", ["matrix", "refresh"]), ("matrix", ["matrix", "site"]), ("matrix", ["matrix", "api"]),
]


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("command", "argv"), HELP, ids=[" ".join(a) for _, a in HELP])
def test_help_states_the_exit_codes_of_the_constants(command: str, argv: list[str]) -> None:
    result = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    stated = re.search(r"Exit code: (.*?)\.(?:\s\s|\s*$)", result.output, re.S)
    assert stated, f"compat {' '.join(argv)} --help states no exit codes"
    assert _words(stated.group(0)) == exit_code_help(command)
    assert tuple(int(n) for n in re.findall(r"(?:^|, )(\d+) ", _words(stated.group(1)))) == codes(command)


def test_plan_help_says_4_for_no_compatible_set_and_3_for_a_bug() -> None:
    text = _words(CliRunner().invoke(app, ["plan", "--help"], env={"COLUMNS": "100"}).output)
    assert f"{int(ExitCode.NO_COMPATIBLE_SET)} no compatible set" in text
    assert f"{int(ExitCode.INTERNAL_ERROR)} a bug in compat" in text


def _readme_table() -> dict[str, str]:
    """README's command table: `compat X` → its exit-code cell."""
    rows: dict[str, str] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and (cells[0].startswith("`compat ") or cells[0] == "any command"):
            rows[cells[0].strip("`")] = cells[2]
    return rows


README_ROWS = {
    "compat doctor": "doctor", "compat explain LOG": "explain", "compat lock TARGET...": "lock", "compat plan": "plan",
    "compat facts": "facts", "compat matrix show/validate/refresh": "matrix", "compat report": "report",
    "compat matrix site DIR": "matrix",
}


def test_readme_command_table_agrees_with_the_constants() -> None:
    rows = _readme_table()
    assert set(README_ROWS) | {"any command"} <= set(rows), sorted(rows)
    for row, command in README_ROWS.items():
        stated = {int(n) for n in re.findall(r"(?:^|, )(\d+)\b", rows[row])}
        expected = set(codes(command)) - {ExitCode.INTERNAL_ERROR}  # 3 has its own row, for every command
        assert stated == expected, f"README: {row}: exit codes {sorted(stated)}, the code says {sorted(expected)}"
    assert rows["any command"] == str(int(ExitCode.INTERNAL_ERROR))


def test_no_doc_gives_plan_another_code_for_no_compatible_set() -> None:
    wrong = re.compile(r"plan[^.|]{0,200}?\bexits? (\d)[^.|]{0,40}no (?:compatible )?set|exits (\d), not 1, when no set", re.S)
    for path in [README, *DOCS]:
        for m in wrong.finditer(path.read_text(encoding="utf-8")):
            code = int(m.group(1) or m.group(2))
            assert code == ExitCode.NO_COMPATIBLE_SET, f"{path.name}: {_words(m.group(0))!r}"


def test_every_command_documents_usage_and_bug_codes() -> None:
    for command in COMMAND_EXITS:
        assert {ExitCode.USAGE, ExitCode.INTERNAL_ERROR} <= set(codes(command))


def _code_rows(page: Path) -> dict[int, str]:
    """The rows of a page's exit-code table (`| 3 | what it means |`), by code."""
    rows = {}
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|(.*)\|\s*$", line)
        if m:
            rows[int(m.group(1))] = m.group(2)
    return rows


@pytest.mark.parametrize("page", ["robustness.md", "ci.md"])
def test_exit_code_tables_in_the_docs_agree(page: str) -> None:
    rows = _code_rows(ROOT / "docs" / page)
    assert rows, f"docs/{page}: no exit-code table"
    assert "bug" in rows[ExitCode.INTERNAL_ERROR]
    if ExitCode.NO_COMPATIBLE_SET in rows:
        assert "plan" in rows[ExitCode.NO_COMPATIBLE_SET] and "no compatible set" in rows[ExitCode.NO_COMPATIBLE_SET]
    assert set(rows) <= {int(c) for c in ExitCode}, f"docs/{page}: a code compat does not use: {sorted(rows)}"
