"""Small ELF64 shared objects written byte by byte: a dynamic section with the entries the loader reads first."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

X86_64 = 62


def write_elf(
    path: Path, *, soname: str | None = None, needed: Sequence[str] = (), rpath: str | None = None,
    runpath: str | None = None, wants: Mapping[str, Sequence[str]] | None = None, defines: Sequence[str] = (),
    machine: int = X86_64, interpreter: str | None = None,
) -> Path:
    """An ELF64 little-endian file whose single PT_LOAD maps it whole at address 0 (an address is its offset)."""
    strings = bytearray(b"\0")
    offsets: dict[str, int] = {}

    def at(text: str) -> int:
        if text not in offsets:
            offsets[text] = len(strings)
            strings.extend(text.encode() + b"\0")
        return offsets[text]

    wants = dict(wants or {})
    verneed = bytearray()
    for i, (file, versions) in enumerate(wants.items()):
        last = i == len(wants) - 1
        verneed += struct.pack("<HHIII", 1, len(versions), at(file), 16, 0 if last else 16 + 16 * len(versions))
        for j, version in enumerate(versions):
            verneed += struct.pack("<IHHII", 0, 0, 0, at(version), 0 if j == len(versions) - 1 else 16)
    verdef = bytearray()
    for i, version in enumerate(defines):
        verdef += struct.pack("<HHHHIII", 1, 0, i + 1, 1, 0, 20, 0 if i == len(defines) - 1 else 28)
        verdef += struct.pack("<II", at(version), 0)
    dynamic = [(1, at(name)) for name in needed]
    dynamic += [(14, at(soname))] if soname else []
    dynamic += [(15, at(rpath))] if rpath is not None else []
    dynamic += [(29, at(runpath))] if runpath is not None else []
    interp = at(interpreter) if interpreter is not None else None
    phoff = 64
    phnum = 2 if interp is None else 3
    strtab = phoff + phnum * 56
    need_at = strtab + len(strings)
    def_at = need_at + len(verneed)
    dyn_at = def_at + len(verdef)
    dynamic += [(5, strtab)]
    dynamic += [(0x6FFFFFFE, need_at), (0x6FFFFFFF, len(wants))] if wants else []
    dynamic += [(0x6FFFFFFC, def_at), (0x6FFFFFFD, len(defines))] if defines else []
    dynamic += [(0, 0)]
    body = b"".join(struct.pack("<qQ", tag, value) for tag, value in dynamic)
    total = dyn_at + len(body)
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<HH", head, 0x10, 3, machine)
    struct.pack_into("<Q", head, 0x20, phoff)
    struct.pack_into("<HH", head, 0x36, 56, phnum)
    phdrs = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
    phdrs += struct.pack("<IIQQQQQQ", 2, 6, dyn_at, dyn_at, dyn_at, len(body), len(body), 8)
    if interp is not None and interpreter is not None:
        size = len(interpreter.encode()) + 1
        phdrs += struct.pack("<IIQQQQQQ", 3, 4, strtab + interp, strtab + interp, strtab + interp, size, size, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(head) + phdrs + bytes(strings) + bytes(verneed) + bytes(verdef) + body)
    return path


def write_ld_cache(path: Path, libraries: Mapping[str, str]) -> Path:
    """/etc/ld.so.cache in glibc's format 1.1: soname -> path (string offsets count from the header)."""
    count = len(libraries)
    strings = bytearray()
    entries = bytearray()
    base = 48 + 24 * count
    for name, target in libraries.items():
        key = base + len(strings)
        strings += name.encode() + b"\0"
        value = base + len(strings)
        strings += target.encode() + b"\0"
        entries += struct.pack("<iIIIQ", 0x0303, key, value, 0, 0)
    head = b"glibc-ld.so.cache1.1" + struct.pack("<II", count, len(strings)) + bytes(20)
    path.write_bytes(head + bytes(entries) + bytes(strings))
    return path
