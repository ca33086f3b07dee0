"""Read chosen members of a remote zip (a wheel) with HTTP range requests.

The end of the file gives the central directory (one request for most wheels, two when the
directory is larger than the first read); the members wanted are then fetched in ranges that
coalesce neighbours (a gap under `GAP` bytes is read rather than paid for with another request),
and each is inflated with a bound on its output so a hostile member cannot exhaust memory. A
torch wheel of 800 MB gives its Python sources for a few percent of its bytes.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from compat.errors import PackageIndexError

GAP = 256 * 1024
"""Read through a gap this small between two wanted members instead of sending another request."""
MAX_RANGE = 32 * 1024 * 1024
"""Largest single range request."""
MAX_MEMBER = 64 * 1024 * 1024
"""Largest member inflated (a Python source file is far smaller)."""
_TAIL = 256 * 1024

_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"


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
    """0 stored, 8 deflated (others are not read)."""


Fetch = Callable[[int | None, int], tuple[int, int, bytes]]
"""fetch(start, length) -> (start, total size, bytes); start None reads the last `length` bytes."""


class RemoteZip:
    """The central directory of a remote zip and a way to read its members by ranges."""

    def __init__(self, fetch: Fetch, label: str) -> None:
        self._fetch = fetch
        self.label = label
        self.requests = 0
        start, self.size, tail = self._get(None, _TAIL)
        self._whole = tail if start == 0 and len(tail) == self.size else None
        self._tail_start, self._tail = start, tail
        cd_offset, cd_size, count = self._directory_location(start, tail)
        if cd_offset >= start:
            directory = tail[cd_offset - start : cd_offset - start + cd_size]
        else:
            _, _, directory = self._get(cd_offset, cd_size)
        if len(directory) != cd_size:
            raise PackageIndexError(f"{label}: short central directory")
        self.members = self._parse_directory(directory, count)

    def _get(self, start: int | None, length: int) -> tuple[int, int, bytes]:
        self.requests += 1
        return self._fetch(start, length)

    def _directory_location(self, start: int, tail: bytes) -> tuple[int, int, int]:
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            raise PackageIndexError(f"{self.label}: not a zip file (no end of central directory)")
        _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack("<4s4H2LH", tail[at : at + 22])
        if cd_offset == 0xFFFFFFFF or count == 0xFFFF or cd_size == 0xFFFFFFFF:
            loc = tail.rfind(_EOCD64_LOCATOR, 0, at)
            if loc < 0:
                raise PackageIndexError(f"{self.label}: zip64 without its locator")
            (eocd64_offset,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
            rel = eocd64_offset - start
            if rel < 0:
                _, _, record = self._get(eocd64_offset, 56)
            else:
                record = tail[rel : rel + 56]
            if record[:4] != b"PK\x06\x06":
                raise PackageIndexError(f"{self.label}: bad zip64 end record")
            count, cd_size, cd_offset = struct.unpack("<QQQ", record[32:56])
        if cd_offset + cd_size > self.size:
            raise PackageIndexError(f"{self.label}: central directory past the end of the file")
        return cd_offset, cd_size, count

    def _parse_directory(self, data: bytes, count: int) -> tuple[Member, ...]:
        members = []
        pos = 0
        for _ in range(count):
            if data[pos : pos + 4] != _CENTRAL:
                raise PackageIndexError(f"{self.label}: corrupt central directory")
            (method, _, _, crc, compressed, size, name_len, extra_len, comment_len, _, _, _, offset) = struct.unpack(
                "<H2HLLLHHHHHLL", data[pos + 10 : pos + 46]
            )
            name = data[pos + 46 : pos + 46 + name_len].decode("utf-8", "replace")
            extra = data[pos + 46 + name_len : pos + 46 + name_len + extra_len]
            if 0xFFFFFFFF in (compressed, size, offset):
                compressed, size, offset = _zip64_extra(extra, compressed, size, offset)
            members.append(Member(name=name, offset=offset, compressed=compressed, size=size, crc=crc, method=method))
            pos += 46 + name_len + extra_len + comment_len
        return tuple(members)

    def read(self, wanted: Iterable[Member], *, max_member: int = MAX_MEMBER) -> dict[str, bytes]:
        """The inflated bytes of each wanted member (by name); a member that cannot be read is left out."""
        ordered = sorted(wanted, key=lambda m: m.offset)
        out: dict[str, bytes] = {}
        group: list[Member] = []

        def flush() -> None:
            if not group:
                return
            start = group[0].offset
            end = max(m.offset + 30 + len(m.name.encode()) + m.compressed + 1024 for m in group)
            end = min(end, self.size)
            if self._whole is not None:
                blob = self._whole[start:end]
            elif start >= self._tail_start:  # in the first read already (dist-info sits at the end)
                blob = self._tail[start - self._tail_start : end - self._tail_start]
            else:
                _, _, blob = self._get(start, end - start)
            for member in group:
                data = _inflate(blob, member.offset - start, member, max_member)
                if data is None and self._whole is None:  # a long local extra field: read it alone
                    _, _, alone = self._get(member.offset, 30 + len(member.name.encode()) + member.compressed + 65536)
                    data = _inflate(alone, 0, member, max_member)
                if data is not None:
                    out[member.name] = data
            group.clear()

        for member in ordered:
            if member.method not in (0, 8) or member.size > max_member:
                continue
            if group:
                last = group[-1]
                gap = member.offset - (last.offset + 30 + len(last.name.encode()) + last.compressed)
                if gap > GAP or member.offset + member.compressed - group[0].offset > MAX_RANGE:
                    flush()
            group.append(member)
        flush()
        return out


def _zip64_extra(extra: bytes, compressed: int, size: int, offset: int) -> tuple[int, int, int]:
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[pos : pos + 4])
        if tag == 1:
            values = extra[pos + 4 : pos + 4 + length]
            fields = [size, compressed, offset]
            i = 0
            for j, value in enumerate(fields):
                if value == 0xFFFFFFFF and i + 8 <= len(values):
                    (fields[j],) = struct.unpack("<Q", values[i : i + 8])
                    i += 8
            size, compressed, offset = fields
            break
        pos += 4 + length
    return compressed, size, offset


def _inflate(blob: bytes, at: int, member: Member, limit: int) -> bytes | None:
    header = blob[at : at + 30]
    if len(header) < 30 or header[:4] != _LOCAL:
        return None
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    begin = at + 30 + name_len + extra_len
    raw = blob[begin : begin + member.compressed]
    if len(raw) != member.compressed:
        return None
    if member.method == 0:
        data = raw
    else:
        inflater = zlib.decompressobj(-15)
        try:
            data = inflater.decompress(raw, min(limit, member.size) + 1)
        except zlib.error:
            return None
    if len(data) != member.size or zlib.crc32(data) != member.crc:
        return None
    return data


__all__ = ["GAP", "MAX_MEMBER", "Member", "RemoteZip"]
