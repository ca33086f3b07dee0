"""compat's own cache directory, and atomic writes into it.

The cache only ever holds what compat can recompute (parsed matrix files, index metadata, torch
build facts); a failure to read or write it is never an error, only a slower run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_root() -> Path:
    """$COMPAT_CACHE_DIR, else $XDG_CACHE_HOME/compat, else ~/.cache/compat."""
    explicit = os.environ.get("COMPAT_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "compat"


def write_atomic(path: Path, data: bytes) -> bool:
    """Write `data` to `path` so that readers see the old file or the new one, never half; False on failure."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
