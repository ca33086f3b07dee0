"""The one way compat replaces a file: readers see the old bytes or the new ones, never half.

A leaf module (standard library only) so that both the cache in compat/sources and the curator
tools in compat/maintain can use it without importing each other.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from compat.regular_file import file_kind, was_read


def write_atomic(path: Path, data: bytes, *, check: Callable[[Path], None] | None = None) -> None:
    """Write `data` to `path` through a temporary file beside it and `os.replace`; raises OSError.

    `check`, when given, is called with the temporary file once it is complete; whatever it
    raises leaves `path` untouched (refresh parses a generated file back before it lands).
    The file gets the mode an ordinary `open()` would give it: a replaced file keeps its mode,
    a new one gets 0666 less the umask (mkstemp's 0600 would hide a lock from a non-root image).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    import tempfile  # here: a warm start reads its caches and writes none

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        if check is not None:
            check(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RefusedOutput(OSError):
    """An output path compat will not write: not a regular file, or a file its owner made read-only."""


def write_output(path: Path, data: bytes) -> Path:
    """Write a file the user named (`-o FILE`) atomically; returns the file written; raises OSError.

    A symlink is followed (its target is replaced, the link stays), so `-o` never turns a link
    into a file. Anything but a regular file or a missing path is refused before a byte is
    written: replacing `/dev/null` as root would leave a regular file where the device was. A file
    without write permission is refused, as root too: the read-only bit is the owner saying no. A file this run
    read (compat.regular_file's `was_read`: a requirements file, a log, a facts file, a config) or standard input
    redirected from is refused too: `-o` naming the input by mistake would replace it with its own report.
    """
    target = Path(os.path.realpath(path))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise RefusedOutput(0, f"{file_kind(info.st_mode)}, not a regular file; compat writes only regular files", str(path))
        if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise RefusedOutput(0, "read-only; compat does not overwrite it", str(path))
        if was_read(info) or _is_stdin(info):
            raise RefusedOutput(0, "an input of this run; compat does not overwrite what it reads", str(path))
    write_atomic(target, data)
    return target


def _is_stdin(info: os.stat_result) -> bool:
    """Whether standard input is the file `info` describes (`compat explain - < log -o log`)."""
    try:
        given = os.fstat(0)
    except OSError:
        return False
    return stat.S_ISREG(given.st_mode) and (given.st_dev, given.st_ino) == (info.st_dev, info.st_ino)


def _umask() -> int:
    # Linux reports the umask in /proc; elsewhere it can only be read by setting it, which another
    # thread writing a cache file at that instant would see, hence the common 022 as the stand-in.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current
