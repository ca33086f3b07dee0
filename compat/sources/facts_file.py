"""A saved `compat facts` snapshot, read from disk (parsing is compat.model.facts.load_facts)."""

from __future__ import annotations

from pathlib import Path

from compat.errors import UsageError


def read_text(path: Path) -> str:
    """The file's text; a missing or unreadable file is a one-line UsageError."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
