"""Reading a log in blocks of whole lines, and counting the lines of a block."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

HUGE_LINE = 1024 * 1024
"""Bytes of one line the reader keeps; the rest of a longer line is dropped."""


def count_lines(block: str | bytes) -> int:
    """Lines in a block; a block without a final newline still ends a line."""
    if not block:
        return 0
    if isinstance(block, (bytes, bytearray)):
        return block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
    return block.count("\n") + (0 if block.endswith("\n") else 1)


def read_blocks(stream: BinaryIO, *, size: int = 8 * 1024 * 1024) -> Iterator[bytes]:
    """Blocks of whole lines from a binary stream. Of a line longer than HUGE_LINE only the
    first HUGE_LINE bytes are kept (ended with a newline so line numbers stay right).

    A block is read into a fresh bytearray and the line it ends inside is finished in place with
    readline: the text is copied once, by the read itself."""
    while True:
        room = _room(stream, size)
        buf = bytearray(room + HUGE_LINE + 1)
        view = memoryview(buf)
        n = stream.readinto(view[:room])  # type: ignore[attr-defined]  # every BinaryIO compat reads has readinto
        if not n:
            view.release()
            return
        if buf[n - 1] != 0x0A:
            head = buf.rfind(b"\n", 0, n) + 1
            partial = n - head
            if partial >= HUGE_LINE:
                n = head + HUGE_LINE
                buf[n] = 0x0A
                n += 1
                _drop_line(stream)
            else:
                rest = stream.readline(HUGE_LINE - partial)
                view[n : n + len(rest)] = rest
                n += len(rest)
                if rest and not rest.endswith(b"\n"):
                    buf[n] = 0x0A
                    n += 1
                    _drop_line(stream)
        view.release()
        del buf[n:]
        yield buf  # type: ignore[misc]  # a bytearray reads like bytes everywhere a block goes


def _room(stream: BinaryIO, size: int) -> int:
    """Bytes to read into the next block: `size`, or what is left of a plain file when that is less. A block's
    buffer is zeroed when it is made: a pasted log of a few lines need not pay for 9 MB of it."""
    if not isinstance(stream, (io.BufferedReader, io.FileIO)):
        return size  # a gzip stream's file holds fewer bytes than it gives; a pipe's size is not known
    try:
        st = os.fstat(stream.fileno())
        left = st.st_size - stream.tell()
    except (OSError, ValueError):
        return size
    if not stat.S_ISREG(st.st_mode):
        return size
    # At least a little: a file that grows while it is read (a log being written) still gives its new lines.
    return min(size, max(left, _MIN_ROOM))


_MIN_ROOM = 64 * 1024


def _drop_line(stream: BinaryIO) -> None:
    """Skips to the start of the next line (the rest of a huge line)."""
    while True:
        rest = stream.readline(HUGE_LINE)
        if not rest or rest.endswith(b"\n"):
            return
