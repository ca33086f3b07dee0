"""Reading a named input file without letting it hurt compat: special files refused, size bounded.

A FIFO given as `--facts` would block `open()` forever, `/dev/zero` would never end, and a
multi-gigabyte "log" would exhaust memory. Every file a user names goes through `read_regular`
(or `open_regular` for a stream), which opens without blocking, refuses anything that is not a
regular file before reading a byte, and stops at a size bound.

Every file opened here is remembered as an input of this run (`was_read`), so that `-o` naming one of them
(`compat doctor -r req.txt -o req.txt`, an explained log as its own report) is refused by compat.atomic
instead of replacing what was just judged.

A leaf module (standard library only) like compat.atomic: the matrix loader (overlays) and the
host sources both use it.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import BinaryIO

MIB = 1024 * 1024


_read: set[tuple[int, int]] = set()
"""(device, inode) of every file `open_regular` opened since `forget_reads`: this run's inputs."""


def was_read(info: os.stat_result) -> bool:
    """Whether the file `info` describes was opened as an input since the run began."""
    return (info.st_dev, info.st_ino) in _read


def forget_reads() -> None:
    """Start a run with no inputs (the command line calls it first; in one process one run follows another)."""
    _read.clear()


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory; `strerror` says which."""


def file_kind(mode: int) -> str:
    """What a special file is, for a message ("a FIFO (named pipe)", "a device")."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for binary reading; raises OSError (NotRegularFile for a special file).

    O_NONBLOCK makes opening a FIFO with no writer return at once instead of waiting; the
    descriptor is then checked with fstat, so the check and the read see the same file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if not stat.S_ISREG(mode):
            what = file_kind(mode)
            raise NotRegularFile(0, f"{what}, not a regular file" if what.startswith("a ") else what, str(path))
        _read.add((info.st_dev, info.st_ino))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, *, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; raises OSError (with a strerror) otherwise."""
    with open_regular(path) as handle:
        # read(limit + 1) would allocate the whole bound first (32 MiB for a curated file: 0.25 ms each, 20 ms for
        # the 82 files the compiled matrix's key hashes on every run): read what fstat says is there, then on to
        # the bound only when the file grew since.
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(min(size, limit) + 1)
        if size < len(data) <= limit:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooLarge(0, f"larger than {_size(limit)}", str(path))
    return data


class TooLarge(OSError):
    """The file is larger than the bound its reader allows."""


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit >= MIB and limit % MIB == 0 else f"{limit} bytes"


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16's: FF FE 00 00 starts with UTF-16 LE's FF FE
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def bom_encoding(head: bytes) -> str | None:
    """The codec a byte-order mark at the start of `head` (its first 4 bytes suffice) names, None without one.

    Windows PowerShell 5.1's `>` and `Out-File` write UTF-16 LE with a BOM, so `compat facts > facts.json` and
    `... 2>&1 > train.log` there give UTF-16 files; pip reads a requirements file by its BOM the same way.
    """
    return next((codec for bom, codec in _BOMS if head.startswith(bom)), None)


SNIFF = 4096
"""Bytes of a file's head that decide its encoding when it has no byte-order mark."""


class NotText(UnicodeDecodeError):
    """A file whose NUL bytes say it is binary, not text in any encoding compat reads."""

    def __init__(self, data: bytes) -> None:
        super().__init__("utf-8", data[:1], 0, 1, "a binary file (NUL bytes), not text")

    def __str__(self) -> str:
        return self.reason


def text_encoding(head: bytes) -> str | None:
    """The codec `head` (a file's first SNIFF bytes) is in; None for UTF-8; raises NotText for a binary head.

    A byte-order mark decides first. Without one, NUL bytes decide: UTF-16 or UTF-32 written without a mark (Python's
    "utf-16-le", .NET's `Encoding.Unicode.GetBytes`, a log copied out of a Windows tool) has a NUL in every other (or
    three of every four) byte of ASCII text, which read as UTF-8 is one NUL-studded line that matches nothing: a
    silent "nothing known" on a real log. Other NULs in the head (an archive, a checkpoint, /dev/zero) are a binary
    file. Leading NUL pairs are skipped first: a log truncated under a process that still writes at its old offset
    (logrotate's copytruncate) starts with a hole of NULs and is still UTF-8 text after it.
    """
    codec = bom_encoding(head[:4])
    if codec is not None:
        return codec
    if b"\0" not in head:
        return None
    text = head.lstrip(b"\0")
    if b"\0" not in text:
        return None  # a hole, then UTF-8 (or only a hole so far)
    body = head[len(head) - len(text) & ~3:]  # from a whole NUL quad: a big-endian head keeps its alignment
    for codec, width, zeros in _NUL_PATTERNS:
        units = [body[i:i + width] for i in range(0, len(body) - width + 1, width)]
        if units and sum(all(u[j] == 0 for j in zeros) and any(u) for u in units) >= 0.9 * len(units):
            return codec
    if text.count(0) * 100 >= len(text):  # a NUL in every hundred bytes: no text compat reads
        raise NotText(text)
    return None


_NUL_PATTERNS = (  # (codec, code unit width, the unit's bytes that are NUL for ASCII text); UTF-32's before UTF-16's
    ("utf-32-le", 4, (1, 2, 3)),
    ("utf-32-be", 4, (0, 1, 2)),
    ("utf-16-le", 2, (1,)),
    ("utf-16-be", 2, (0,)),
)


def decode_text(data: bytes) -> str:
    """A user's text file: by its byte-order mark (UTF-8, UTF-16, UTF-32, the mark dropped), else by its NUL bytes'
    pattern (UTF-16 or UTF-32 without a mark), else UTF-8; raises UnicodeDecodeError (NotText for a binary file)."""
    return data.decode(text_encoding(data[:SNIFF]) or "utf-8")
