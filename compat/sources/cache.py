"""compat's own cache: files it can recompute, stored under Settings.cache_dir.

The cache only ever holds what compat can recompute (parsed matrix files, index metadata, torch
build facts); a failure to read or write it is never an error, only a slower run.
"""

from __future__ import annotations

from pathlib import Path

from compat.atomic import write_atomic


def store(path: Path, data: bytes) -> bool:
    """Write a cache entry atomically; False when it cannot be written (an unwritable cache only costs speed)."""
    try:
        write_atomic(path, data)
    except OSError:
        return False
    return True
