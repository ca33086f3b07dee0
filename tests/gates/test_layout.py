"""Gates on the shape of compat/ that no linter holds: how long a module may grow, and where a broad
`except` may stand (ruff's C901 in pyproject.toml holds the length of a function's logic)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "compat"

# An `except` line and what it names; child code kept in strings (run in the judged interpreter) counts too.
_EXCEPT = re.compile(r"^\s*except\b(?P<types>[^:]*?)(?:\s+as\s+\w+)?\s*:", re.MULTILINE)

BROAD_ALLOWED = {
    # The CLI's last resort (`compat` and `python -m compat.fleet` both run under it): a bug is one line, exit 3.
    "compat/cli/__init__.py": 1,
    # The probe's child boundary: inside the child, each read of torch may fail in ways torch does not list.
    "compat/sources/probe/torch.py": 1,
    # smoke's child boundary: a step runs the judged stack in its own interpreter; any failure is the step's.
    "compat/sources/smoke/child_steps.py": 1,
}


def broad_handlers(text: str) -> list[tuple[int, set[str]]]:
    """(line, names caught) of each `except` that catches Exception or BaseException, or everything."""
    found = []
    for m in _EXCEPT.finditer(text):
        names = set(re.findall(r"\w+", m.group("types")))
        if not names or names & {"Exception", "BaseException"}:
            found.append((text.count("\n", 0, m.start()) + 1, names))
    return found


def reraising_handlers(text: str) -> set[int]:
    """Lines of the `except BaseException` handlers whose body ends by re-raising (a cleanup, not a catch)."""
    lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ExceptHandler) and node.body:
            last = node.body[-1]
            if isinstance(last, ast.Raise) and last.exc is None:
                lines.add(node.lineno)
    return lines


MAX_MODULE_LINES = 600
"""Past this a module holds more than one thing: split it along its seams (issue 22)."""

TOO_LONG_FOR_NOW: set[str] = set()
"""Modules allowed past the limit while they are split: none."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_over_the_line_limit() -> None:
    lengths = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in _modules()}
    assert len(lengths) > 100  # the walk found the package
    too_long = {rel: n for rel, n in lengths.items() if n > MAX_MODULE_LINES and rel not in TOO_LONG_FOR_NOW}
    assert too_long == {}, f"modules over {MAX_MODULE_LINES} lines: split them along their seams"


def test_the_detector_sees_every_spelling() -> None:
    text = ("try:\n    pass\nexcept Exception:\n    pass\nexcept (ValueError, Exception) as exc:\n    pass\n"
            "except:\n    pass\nexcept BaseException:\n    raise\nexcept ValueError:\n    pass\n"
            "x = 'except Exceptional:'\n")
    assert [line for line, _ in broad_handlers(text)] == [3, 5, 7, 9]
    assert reraising_handlers(text) == {9}


def test_broad_except_only_at_the_documented_boundaries() -> None:
    offenders = []
    counts: dict[str, int] = {}
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        reraised = reraising_handlers(text)
        for line, names in broad_handlers(text):
            if "BaseException" in names or not names:
                if line not in reraised:
                    offenders.append(f"{rel}:{line}: catches BaseException without re-raising it")
                continue
            counts[rel] = counts.get(rel, 0) + 1
    for rel, n in sorted(counts.items()):
        if n > BROAD_ALLOWED.get(rel, 0):
            offenders.append(f"{rel}: {n} `except Exception` (allowed: {BROAD_ALLOWED.get(rel, 0)}); "
                             "name the exceptions that can occur there")
    assert offenders == []
    # Each boundary is still there: one that went away must leave this list too.
    assert counts == BROAD_ALLOWED


def test_each_boundary_says_why() -> None:
    for rel in BROAD_ALLOWED:
        lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
        for line, _ in broad_handlers("\n".join(lines)):
            around = " ".join(lines[max(0, line - 6):line + 3]).lower()
            assert "boundary" in around or "last resort" in around, f"{rel}:{line} has no comment saying why"
