"""What the dynamic loader reads of a shared library before it maps it: the ELF dynamic section, read with a few
small reads of the file (never the whole of a 500 MB libtorch_cpu.so), and the loader's cache (/etc/ld.so.cache).

Only ELF64 little-endian files are read (x86_64, aarch64: the platforms torch ships wheels for); anything else is
None, and whoever asked learns nothing from it (the real loader decides).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NULL, DT_NEEDED, DT_STRTAB, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 14, 15, 29
DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
MAX_ENTRIES = 4096
"""More dynamic entries, version records or strings than this is not a library the loader is asked to load here."""
MAX_STRING = 4096
MAX_OFFSET = 1 << 48
"""No file read here is larger: an offset past this is a hostile or torn header (and past 2**63 Python's seek raises
ValueError, which no caller expects)."""


@dataclass(frozen=True, kw_only=True)
class Elf:
    """The dynamic section of one shared library (or executable)."""

    machine: int
    """e_machine: the loader skips a library built for another machine and searches on."""
    interpreter: str | None = None
    """PT_INTERP: the program's dynamic loader (a Nix or Homebrew glibc's has its own cache and default directories)."""
    soname: str | None
    needed: tuple[str, ...]
    """DT_NEEDED, in order."""
    rpath: tuple[str, ...]
    """DT_RPATH's directories (searched before LD_LIBRARY_PATH, and only where DT_RUNPATH is absent)."""
    runpath: tuple[str, ...]
    """DT_RUNPATH's directories (searched after LD_LIBRARY_PATH, for this object's own dependencies only)."""
    wants: tuple[tuple[str, tuple[str, ...]], ...]
    """DT_VERNEED: for each library (by soname) the symbol versions this object needs of it ("GLIBCXX_3.4.29")."""
    defines: frozenset[str]
    """DT_VERDEF: the symbol versions this library provides."""


class NotElf(Exception):
    """The file is not an ELF64 little-endian object compat can read, or its dynamic section does not parse."""


class OtherClass(NotElf):
    """An ELF file of the other class (32-bit): the loader skips it and searches on, as for another machine (any
    other damage to the header is an error it stops at)."""


def read_elf(path: Path) -> Elf:
    """The dynamic section of `path`; raises OSError (unreadable) or NotElf."""
    with open(path, "rb") as f:
        return _read(f)


def _at(f: BinaryIO, offset: int, size: int) -> bytes:
    if not 0 <= offset <= MAX_OFFSET:
        raise NotElf("an offset outside any file")
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise NotElf("truncated")
    return data


def _read(f: BinaryIO) -> Elf:
    head = f.read(64)
    if len(head) >= 5 and head[:4] == b"\x7fELF" and head[4] == 1:
        raise OtherClass("a 32-bit ELF file")
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        raise NotElf("not an ELF64 little-endian file")
    machine = struct.unpack_from("<H", head, 0x12)[0]
    phoff, = struct.unpack_from("<Q", head, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
    if phentsize != 56 or not 0 < phnum <= MAX_ENTRIES:
        raise NotElf("unexpected program headers")
    table = _at(f, phoff, 56 * phnum)
    loads: list[tuple[int, int, int]] = []
    dynamic: tuple[int, int] | None = None
    interp: tuple[int, int] | None = None
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", table, 56 * i)
        if kind == PT_LOAD:
            loads.append((vaddr, filesz, offset))
        elif kind == PT_DYNAMIC:
            dynamic = (offset, filesz)
        elif kind == PT_INTERP:
            interp = (offset, filesz)
    if dynamic is None:
        raise NotElf("no dynamic section")
    entries = _dynamic(_at(f, dynamic[0], min(dynamic[1], 16 * MAX_ENTRIES)))

    def offset_of(vaddr: int) -> int:
        for start, size, offset in loads:
            if start <= vaddr < start + size:
                return vaddr - start + offset
        raise NotElf("an address outside the file")

    tags = dict(entries)  # the last of a repeated tag; only DT_NEEDED repeats in a real library
    if DT_STRTAB not in tags:
        raise NotElf("no string table")
    strtab = offset_of(tags[DT_STRTAB])

    def text(at: int) -> str:
        return _string(f, strtab + at)

    return Elf(
        machine=machine,
        interpreter=None if interp is None else _string(f, interp[0]),
        soname=text(tags[DT_SONAME]) if DT_SONAME in tags else None,
        needed=tuple(text(v) for t, v in entries if t == DT_NEEDED),
        rpath=_dirs(text(tags[DT_RPATH])) if DT_RPATH in tags else (),
        runpath=_dirs(text(tags[DT_RUNPATH])) if DT_RUNPATH in tags else (),
        wants=_verneed(f, offset_of(tags[DT_VERNEED]), tags.get(DT_VERNEEDNUM, 0), text) if DT_VERNEED in tags else (),
        defines=_verdef(f, offset_of(tags[DT_VERDEF]), tags.get(DT_VERDEFNUM, 0), text) if DT_VERDEF in tags else frozenset(),
    )


def _dynamic(data: bytes) -> list[tuple[int, int]]:
    out = []
    for i in range(len(data) // 16):
        tag, value = struct.unpack_from("<qQ", data, 16 * i)
        if tag == DT_NULL:
            break
        out.append((tag, value))
    return out


def _string(f: BinaryIO, offset: int) -> str:
    if not 0 <= offset <= MAX_OFFSET:
        raise NotElf("a string outside any file")
    f.seek(offset)
    data = f.read(MAX_STRING)
    end = data.find(b"\0")
    if end < 0:
        raise NotElf("an unterminated string")
    return data[:end].decode("utf-8", "surrogateescape")


def _dirs(text: str) -> tuple[str, ...]:
    # An empty element is kept: the loader searches the current directory for it ("a::b", ":a").
    return tuple(text.split(":")) if text else ()


def _verneed(f: BinaryIO, offset: int, count: int, text: Callable[[int], str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out: list[tuple[str, tuple[str, ...]]] = []
    budget = MAX_ENTRIES  # records in all: per level, a hostile file makes it 4096 x 4096 reads (a minute)
    for _ in range(min(count, MAX_ENTRIES)):
        _, cnt, file, aux, nxt = struct.unpack("<HHIII", _at(f, offset, 16))
        names, at = [], offset + aux
        if cnt > budget:
            raise NotElf("more symbol versions than a library has")
        budget -= cnt
        for _ in range(cnt):
            _, _, _, name, anext = struct.unpack("<IHHII", _at(f, at, 16))
            names.append(text(name))
            at += anext
        out.append((text(file), tuple(names)))
        if not nxt:
            break
        offset += nxt
    return tuple(out)


def _verdef(f: BinaryIO, offset: int, count: int, text: Callable[[int], str]) -> frozenset[str]:
    out: set[str] = set()
    for _ in range(min(count, MAX_ENTRIES)):
        _, _, _, cnt, _, aux, nxt = struct.unpack("<HHHHIII", _at(f, offset, 20))
        if cnt:
            out.add(text(struct.unpack("<I", _at(f, offset + aux, 4))[0]))
        if not nxt:
            break
        offset += nxt
    return frozenset(out)


CACHE_MAGIC = b"glibc-ld.so.cache1.1"


def parse_ld_cache(data: bytes) -> dict[str, tuple[str, ...]]:
    """The loader cache's libraries: soname -> paths, in the cache's order (glibc's format 1.1, written alone or
    after the old one); {} when it is not in that format."""
    start = data.find(CACHE_MAGIC)
    if start < 0 or len(data) < start + 48:
        return {}
    count, = struct.unpack_from("<I", data, start + 20)
    out: dict[str, list[str]] = {}
    for i in range(count):
        at = start + 48 + 24 * i
        if at + 24 > len(data):
            return {}
        _, key, value = struct.unpack_from("<iII", data, at)
        name, path = _cstring(data, start + key), _cstring(data, start + value)
        if name is None or path is None:
            return {}
        out.setdefault(name, []).append(path)
    return {name: tuple(paths) for name, paths in out.items()}


def _cstring(data: bytes, at: int) -> str | None:
    end = data.find(b"\0", at, at + MAX_STRING)  # a torn cache's strings are not each read to its end
    return None if at >= len(data) or end < 0 else data[at:end].decode("utf-8", "surrogateescape")
