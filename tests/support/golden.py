"""The one switch and the one comparison for golden files (renderer outputs, lock goldens, shipped schemas,
generated docs): `COMPAT_UPDATE_GOLDEN=1` or pytest's `--update-golden` rewrites each file with what the test
renders now, then the comparison runs as usual. Read the diff: every changed line is an output change to explain
in the commit."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.paths import ROOT

ENV = "COMPAT_UPDATE_GOLDEN"
_from_option = False


def request_update() -> None:
    """Called by tests/conftest.py when pytest was given --update-golden (in xdist's workers too)."""
    global _from_option
    _from_option = True


def updating() -> bool:
    """Whether this run rewrites golden files instead of only comparing them."""
    return _from_option or os.environ.get(ENV) == "1"


def check_golden(path: Path, text: str) -> None:
    """Assert `text` equals the golden file at `path`; with the switch on, write it first."""
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{name}: no golden file; run with {ENV}=1 (or --update-golden) to write it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file ({ENV}=1 rewrites it)"
