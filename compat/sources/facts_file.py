"""A saved `compat facts` snapshot, read from disk (parsing is compat.model.facts.load_facts)."""

from __future__ import annotations

from pathlib import Path

from compat.errors import UsageError
from compat.regular_file import MIB, decode_text, read_regular

MAX_BYTES = 64 * MIB
"""A facts snapshot is a few hundred KiB; a file past this is not one."""


def read_text(path: Path) -> str:
    """The file's text; a missing, special (FIFO, device), oversized or unreadable file is a one-line UsageError."""
    try:
        return decode_text(read_regular(path, limit=MAX_BYTES))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
