"""The one way compat replaces a file: readers see the old bytes or the new ones, never half.

A leaf module (standard library only) so that both the cache in compat/sources and the curator
tools in compat/maintain can use it without importing each other.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, check: Callable[[Path], None] | None = None) -> None:
    """Write `data` to `path` through a temporary file beside it and `os.replace`; raises OSError.

    `check`, when given, is called with the temporary file once it is complete; whatever it
    raises leaves `path` untouched (refresh parses a generated file back before it lands).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if check is not None:
            check(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
