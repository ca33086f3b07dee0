"""Read chosen members of a remote zip (a wheel) with HTTP range requests.

`zipfile` reads the archive through `_Ranges`, a seekable view of the remote file that holds the
byte ranges fetched so far. The first request reads the end of the file, which holds the central
directory of most wheels; before members are opened, their byte spans are fetched in ranges that
coalesce neighbours (a gap under `GAP` bytes is read rather than paid for with another request), so
zipfile then reads them from memory. Each member is read with a bound on its output, and zipfile
checks its CRC, so a hostile member can neither exhaust memory nor pass for another. A torch wheel
of 800 MB gives its Python sources for a few percent of its bytes.
"""

from __future__ import annotations

import bisect
import copy
import io
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from compat.errors import PackageIndexError

GAP = 256 * 1024
"""Read through a gap this small between two wanted members instead of sending another request."""
MAX_RANGE = 32 * 1024 * 1024
"""Largest single range request."""
MAX_MEMBER = 64 * 1024 * 1024
"""Largest member inflated (a Python source file is far smaller)."""
TAIL = 256 * 1024
_MIN = 16 * 1024
_SLACK = 1024
"""Bytes read past a member's data for its local header's name and extra field."""

# zipfile's own failures on a damaged or hostile archive.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, ValueError, OSError, NotImplementedError, RuntimeError)


@dataclass(frozen=True, kw_only=True)
class Member:
    """One entry of the central directory."""

    name: str
    offset: int
    """Offset of its local header."""
    compressed: int
    size: int
    crc: int
    method: int
    """zipfile's compression method (0 stored, 8 deflated)."""


Fetch = Callable[[int | None, int], tuple[int, int, bytes]]
"""fetch(start, length) -> (start, total size, bytes); start None reads the last `length` bytes."""


class _Ranges(io.RawIOBase):
    """A read-only, seekable view of a remote file made of the ranges fetched so far."""

    def __init__(self, fetch: Fetch, label: str, tail: int) -> None:
        super().__init__()
        self._fetch = fetch
        self.label = label
        self.requests = 0
        self._pos = 0
        self._starts: list[int] = []
        self._chunks: list[bytes] = []
        start, self.size, data = self._get(None, tail)
        self._add(start, data)

    def _get(self, start: int | None, length: int) -> tuple[int, int, bytes]:
        self.requests += 1
        return self._fetch(start, length)

    def _add(self, start: int, data: bytes) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._chunks.insert(i, data)

    def _held(self, start: int, size: int, *, partial: bool = False) -> bytes | None:
        """Bytes [start, start + size) from the chunks held; with `partial`, as many of them as one chunk holds."""
        i = bisect.bisect_right(self._starts, start) - 1
        best = b""
        # Chunks may overlap: look back over those that begin at or before `start`.
        while i >= 0:
            begin, chunk = self._starts[i], self._chunks[i]
            piece = chunk[start - begin : start - begin + size]
            if len(piece) == size:
                return piece
            best = max(best, piece, key=len)
            i -= 1
        return best if partial and best else None

    def prefetch(self, start: int, end: int) -> None:
        """Hold bytes [start, end) with one request, unless they are held already."""
        end = min(end, self.size)
        if end > start and self._held(start, end - start) is None:
            begin, _, data = self._get(start, end - start)
            self._add(begin, data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), max(0, self.size - self._pos))
        if size == 0:
            return 0
        # A short read is fine for a raw stream: zipfile's reader asks again for the rest.
        data = self._held(self._pos, size, partial=True)
        if data is None:
            begin, _, fetched = self._get(self._pos, min(self.size - self._pos, max(size, _MIN)))
            if begin != self._pos or len(fetched) < size:
                raise PackageIndexError(f"{self.label}: short range response")
            self._add(begin, fetched)
            data = fetched[:size]
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


class RemoteZip:
    """The central directory of a remote zip and a way to read its members by ranges."""

    def __init__(self, fetch: Fetch, label: str, *, tail: int = TAIL) -> None:
        """`tail`: the bytes of the first read, from the end (the central directory, and the dist-info)."""
        self.label = label
        self._file = _Ranges(fetch, label, tail)
        try:
            self._zip = zipfile.ZipFile(io.BufferedReader(self._file, buffer_size=_MIN))
            infos = self._zip.infolist()
        except PackageIndexError:
            raise
        except _ZIP_ERRORS as exc:
            what = "not a zip file" if "not a zip file" in str(exc) else "corrupt central directory"
            raise PackageIndexError(f"{label}: {what} ({exc})") from exc
        self._infos = {i.header_offset: i for i in infos}
        self.members = tuple(
            Member(name=i.filename, offset=i.header_offset, compressed=i.compress_size, size=i.file_size, crc=i.CRC,
                   method=i.compress_type)
            for i in infos
        )

    @property
    def requests(self) -> int:
        return self._file.requests

    @property
    def size(self) -> int:
        return self._file.size

    def read(self, wanted: Iterable[Member], *, max_member: int = MAX_MEMBER) -> dict[str, bytes]:
        """The inflated bytes of each wanted member (by name); a member that cannot be read is left out."""
        ordered = sorted((m for m in wanted if m.size <= max_member), key=lambda m: m.offset)
        group: list[Member] = []

        def end_of(m: Member) -> int:
            return m.offset + 30 + len(m.name.encode()) + m.compressed + _SLACK

        def flush() -> None:
            if group:
                self._file.prefetch(group[0].offset, max(end_of(m) for m in group))
                group.clear()

        for member in ordered:
            if group and (member.offset - end_of(group[-1]) > GAP or end_of(member) - group[0].offset > MAX_RANGE):
                flush()
            group.append(member)
        flush()
        out: dict[str, bytes] = {}
        for member in ordered:
            # Read as the Member says (its size and CRC bound and check the output), not as the archive says.
            info = copy.copy(self._infos.get(member.offset) or zipfile.ZipInfo(member.name))
            info.header_offset, info.file_size, info.compress_size = member.offset, member.size, member.compressed
            info.CRC, info.compress_type = member.crc, member.method
            try:
                with self._zip.open(info) as handle:
                    data = handle.read(max_member + 1)
            except PackageIndexError:
                raise
            except _ZIP_ERRORS:
                continue
            if len(data) <= max_member:
                out[member.name] = data
        return out


__all__ = ["GAP", "MAX_MEMBER", "Member", "RemoteZip"]
