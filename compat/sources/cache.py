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


def load(path: Path) -> bytes | None:
    """A cache entry's bytes; None when it is absent or unreadable."""
    try:
        return path.read_bytes()
    except OSError:
        return None


class DirectoryStore:
    """Named cache entries in one directory (compiled automata for explain), over the entries the package ships
    (`shipped`, read only: the automata the wheel's build compiled, compat/_matrix/automata)."""

    def __init__(self, directory: Path, shipped: Path | None = None) -> None:
        self.directory = directory
        self.shipped = shipped

    def get(self, name: str) -> bytes | None:
        """The entry called `name`, None when absent or unreadable."""
        found = load(self.directory / name)
        if found is None and self.shipped is not None:
            found = load(self.shipped / name)
        return found

    def put(self, name: str, data: bytes) -> None:
        """Store the entry called `name` (silently skipped when the cache cannot be written)."""
        store(self.directory / name, data)
