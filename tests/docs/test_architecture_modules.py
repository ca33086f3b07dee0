"""docs/architecture.md names modules by path; a module moved or renamed without updating the page fails here.
The API timeline's table lists every module of compat/timeline/, so a module added there must be described."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def test_every_module_path_the_page_names_exists():
    paths = set(re.findall(r"compat/[\w/]+\.py", PAGE.read_text(encoding="utf-8")))
    assert "compat/timeline/refresh.py" in paths  # the pattern reads the page's paths
    assert sorted(p for p in paths if not (ROOT / p).is_file()) == []


def test_the_timeline_table_lists_every_module_of_the_package():
    listed = set(re.findall(r"^\| `(\w+\.py)` \|", _section("The API timeline"), re.MULTILINE))
    modules = {p.name for p in (ROOT / "compat" / "timeline").glob("*.py") if p.name != "__init__.py"}
    assert listed == modules
