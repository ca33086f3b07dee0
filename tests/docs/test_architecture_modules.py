"""docs/architecture.md names modules by path; a module moved or renamed without updating the page fails here.
The API timeline's table lists every module of compat/timeline/, so a module added there must be described, and
the page names each stage's public entry and every function of the library API (compat.api)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def test_every_module_path_the_page_names_exists() -> None:
    paths = set(re.findall(r"compat/[\w/]+\.py", PAGE.read_text(encoding="utf-8")))
    assert "compat/timeline/refresh.py" in paths  # the pattern reads the page's paths
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_the_timeline_table_lists_every_module_of_the_package() -> None:
    listed = set(re.findall(r"^\| `(\w+\.py)` \|", _section("The API timeline"), re.MULTILINE))
    modules = {p.name for p in (ROOT / "compat" / "timeline").glob("*.py") if p.name != "__init__.py"}
    assert listed == modules


def _owner(paragraph: str) -> Path:
    """The folder a paragraph describes (its first bold `compat/<folder>/`), else compat/ itself."""
    m = re.search(r"\*\*`(compat/[\w/]+?)/?`\*\*", paragraph)
    return ROOT / (m.group(1) if m else "compat")


def test_every_relative_module_path_the_page_names_exists() -> None:
    """`report/fleet.py` means compat/report/fleet.py; a bare `diagnose.py` means a module of the folder its
    paragraph describes (or of compat/ itself, for the leaves)."""
    text = PAGE.read_text(encoding="utf-8")
    missing, seen = [], 0
    for paragraph in re.split(r"\n\s*\n", text):
        owner = _owner(paragraph)
        for path in re.findall(r"(?<![\w/.])((?:\w+/)+\w+\.py)", paragraph):
            seen += 1
            if not path.startswith(("compat/", "tests/")) and not (ROOT / "compat" / path).is_file():
                missing.append(path)
        for name in re.findall(r"`(\w+\.py)`", paragraph):
            seen += 1
            if not any(owner.rglob(name)):
                missing.append(f"{owner.relative_to(ROOT)}/…/{name}")
    assert seen > 40  # the patterns read the page's paths
    assert missing == []


def test_every_tests_path_the_page_names_exists() -> None:
    paths = set(re.findall(r"(?<![\w/])tests/[\w/]+\.py", PAGE.read_text(encoding="utf-8")))
    assert "tests/gates/test_layout.py" in paths
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


# What the page must name as each stage's public entry, as it writes it, and where that lives.
ENTRIES = {
    "compat.sources.gather": ("compat.sources", "gather"),
    "diagnose.diagnose(facts, matrix)": ("compat.judge.diagnose", "diagnose"),
    "match.read_log(lines, matrix)": ("compat.explain.match", "read_log"),
    "match.rank(read, matrix, facts)": ("compat.explain.match", "rank"),
    "resolve(targets, facts, matrix)": ("compat.resolve", "resolve"),
    "resolve_from_installed(targets, fixes, facts, matrix)": ("compat.resolve", "resolve_from_installed"),
    "plan.plan": ("compat.resolve.plan", "plan"),
    "render(command, fmt, result)": ("compat.report.formats", "render"),
    "`FORMATS`": ("compat.report.formats", "FORMATS"),
    "index.lookup": ("compat.timeline.index", "lookup"),
    "links.broken_links": ("compat.timeline.links", "broken_links"),
    "links.installed_set_links": ("compat.timeline.links", "installed_set_links"),
    "drift.answer": ("compat.timeline.drift", "answer"),
}


@pytest.mark.parametrize("written", sorted(ENTRIES))
def test_the_page_names_each_stage_entry_and_it_exists(written: str) -> None:
    module, name = ENTRIES[written]
    assert written in PAGE.read_text(encoding="utf-8")
    assert callable(getattr(importlib.import_module(module), name)) or name.isupper()


def test_the_page_names_every_function_of_the_library_api() -> None:
    from compat import api

    functions = {n for n in api.__all__ if inspect.isfunction(getattr(api, n))
                 and getattr(api, n).__module__.startswith("compat.api.")}
    assert {"doctor", "lock", "explain"} <= functions
    section = _section("The folders")
    assert sorted(n for n in functions if f"`{n}`" not in section) == []
