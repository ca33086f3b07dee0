"""A log to explain: a file, a gzip file or standard input, read as blocks of whole lines.

Opening files and reading standard input is host I/O, so it lives here; how a stream is cut into
blocks is the scanner's business and is passed in (`blocks`).
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from compat.errors import UsageError
from compat.regular_file import SNIFF, NotRegularFile, NotText, open_regular, text_encoding

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
            stream = open_regular(path)
        except NotRegularFile as exc:
            # A FIFO would block until a writer came; standard input is the way to stream a log.
            raise UsageError(f"cannot read {label}: {exc.strerror}; pipe it in with `compat explain -`") from None
        except OSError as exc:
            raise UsageError(f"cannot read {label}: {exc.strerror or exc}") from exc
    raw = stream
    try:
        if _peek(stream, 2) == _GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]  # a GzipFile reads like a BinaryIO
        try:
            codec = text_encoding(_peek(stream, SNIFF))
        except NotText as exc:
            raise UsageError(f"cannot read {label}: {exc}; `compat explain` reads a text log") from None
        if codec is not None and codec != "utf-8-sig":  # a UTF-8 mark is one harmless character on line 1
            stream = io.BufferedReader(_Utf8From(io.TextIOWrapper(stream, encoding=codec, errors="replace", newline="")))
        yield from blocks(stream)
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"cannot read {label}: {getattr(exc, 'strerror', None) or exc}") from exc
    finally:
        if name != STDIN or stream is not raw:
            stream.close()  # a wrapper (gzip, UTF-16) leaves standard input open
        if name != STDIN:
            raw.close()  # GzipFile leaves the file it wraps open


def _peek(stream: BinaryIO, n: int) -> bytes:
    peek = getattr(stream, "peek", None)
    return peek(n)[:n] if peek is not None else b""


class _Utf8From(io.RawIOBase):
    """A text stream's characters as UTF-8 bytes: a UTF-16 or UTF-32 log (found by its byte-order mark or its NULs) read as
    the UTF-8 every other log is, line breaks as they were. Read as bytes, UTF-16's "\n" is "\n\0": the log's
    lines would be cut in the middle of a character, and every match would miss."""

    def __init__(self, text: io.TextIOWrapper) -> None:
        self._text = text
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = self._text.read(64 * 1024)
            if not chunk:
                return 0
            self._pending = chunk.encode("utf-8", "replace")
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._text.detach()  # the file under it is closed by read_log, as for a plain log
        super().close()


def log_size(name: str) -> int | None:
    """Bytes of the log file `name` as stored (compressed for .gz), None for standard input or an unreadable file."""
    if name == STDIN:
        return None
    try:
        return Path(name).stat().st_size
    except OSError:
        return None
