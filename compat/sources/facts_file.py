"""A saved `compat facts` snapshot, read from disk (parsing is compat.model.facts.load_facts)."""

from __future__ import annotations

from pathlib import Path

from compat.errors import UsageError
from compat.regular_file import MIB, read_regular

MAX_BYTES = 64 * MIB
"""A facts snapshot is a few hundred KiB; a file past this is not one."""


def read_text(path: Path) -> str:
    """The file's text; a missing, special (FIFO, device), oversized or unreadable file is a one-line UsageError."""
    try:
        return read_regular(path, limit=MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
