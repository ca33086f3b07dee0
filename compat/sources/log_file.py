"""A log to explain: a file, a gzip file or standard input, read as blocks of whole lines.

Opening files and reading standard input is host I/O, so it lives here; how a stream is cut into
blocks is the scanner's business and is passed in (`blocks`).
"""

from __future__ import annotations

import gzip
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from compat.errors import UsageError

STDIN = "-"
"""The name that means standard input."""

_GZIP_MAGIC = b"\x1f\x8b"


def read_log(name: str, blocks: Callable[[BinaryIO], Iterator[bytes]]) -> Iterator[bytes]:
    """The blocks of the log called `name` (STDIN for standard input); read errors become one-line UsageErrors."""
    stream: BinaryIO
    if name == STDIN:
        stream = sys.stdin.buffer
        label = "standard input"
    else:
        path = Path(name)
        label = str(path)
        if path.is_dir():
            raise UsageError(f"{label} is a directory, not a log file")
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise UsageError(f"cannot read {label}: {exc.strerror or exc}") from exc
    raw = stream
    try:
        peek = getattr(stream, "peek", None)
        head = peek(2)[:2] if peek is not None else b""
        if head == _GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]  # a GzipFile reads like a BinaryIO
        yield from blocks(stream)
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"cannot read {label}: {getattr(exc, 'strerror', None) or exc}") from exc
    finally:
        if name != STDIN:
            stream.close()
            raw.close()  # GzipFile leaves the file it wraps open


def log_size(name: str) -> int | None:
    """Bytes of the log file `name` as stored (compressed for .gz), None for standard input or an unreadable file."""
    if name == STDIN:
        return None
    try:
        return Path(name).stat().st_size
    except OSError:
        return None
