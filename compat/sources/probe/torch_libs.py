"""Whether torch's native libraries load, decided from their files where the files can decide it.

`import torch` fails at its native libraries in two ways on real installs: a library is missing (a libcudnn.so.9 or
libcudart.so.13 whose nvidia wheel is absent, or an old system libstdc++ without the GLIBCXX version torch was built
against), or a symbol is undefined (a library of another version taken instead of the one torch was built with:
a CUDA toolkit's libcudart on LD_LIBRARY_PATH, an nvidia wheel pip upgraded past torch's pin). A load in a child
(`torch.py`) finds both, at half a CPU-second. This reads what the loader reads first, the ELF dynamic sections of
libtorch_global_deps.so and the torch._C extension and of everything they need, and follows the loader's search
(RPATH, LD_LIBRARY_PATH, RUNPATH with $ORIGIN, /etc/ld.so.cache, the default directories) breadth first, as the
loader loads them, with a few small reads of each file.

It settles "they load" only where the undefined-symbol failure cannot arise from what is installed: every library
is torch's own, or is found through torch's run paths in the site-packages torch is installed in (through
LD_LIBRARY_PATH: only inside torch or the nvidia wheels) while every nvidia distribution torch requires is installed
at a version it accepts, or is the C/C++ runtime (glibc, libgcc_s, libstdc++, libgomp), whose symbols are
versioned, so that each symbol version an object needs is checked against what the library found defines. Anything
else (a library missing, taken from LD_LIBRARY_PATH or the system, LD_PRELOAD set, a $LIB or $PLATFORM in a path, an
interpreter with its own run path, a file that is not ELF64) leaves the question to the real load, as does
COMPAT_TORCH_LOAD=1. What this cannot see, and the load would: an unversioned symbol missing from a library of the
expected version (a file damaged or half-replaced), and a library's initializer that crashes.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from compat.model.facts import Distribution
from compat.sources.probe.elf import Elf, NotElf, OtherClass, parse_ld_cache, read_elf

LD_CACHE = Path("/etc/ld.so.cache")
LD_PRELOAD_FILE = Path("/etc/ld.so.preload")
"""The system-wide LD_PRELOAD: its libraries are loaded first and answer for their sonames."""
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
"""Where glibc's loader looks after its cache on 64-bit Linux."""
RUNTIME = ("libc.so.", "libm.so.", "libdl.so.", "librt.so.", "libpthread.so.", "libutil.so.", "libmvec.so.",
           "libresolv.so.", "ld-linux", "libgcc_s.so.", "libstdc++.so.", "libgomp.so.")
"""The sonames of the C and C++ runtime: every symbol they export is versioned, so a too-old one is seen in the
version records (a `GLIBCXX_3.4.30' not found` is read from the files, not met at load)."""
MAX_LIBRARIES = 256
"""A CUDA build needs about 40; a closure larger than this is not decided from the files."""


def undecided(
    directory: Path, *, python: Path, environ: Mapping[str, str], packages: Sequence[Distribution],
    requires: Sequence[str], ld_cache: Path = LD_CACHE, ld_preload: Path = LD_PRELOAD_FILE,
) -> str | None:
    """None where the files settle that torch's libraries at `directory` load in `python`; else why they do not (the
    real load decides then). Never raises on a host quirk."""
    if environ.get("LD_PRELOAD", "").strip():
        return "LD_PRELOAD is set"
    skew = _unmet_requirement(packages, requires)
    if skew is not None:
        return skew
    try:
        executable = read_elf(Path(os.path.realpath(python)))
        if executable.rpath and not executable.runpath:  # a DT_RPATH of the program applies to every library's search
            return f"{python} has its own library search path (DT_RPATH)"
        if ld_preload.is_file() and ld_preload.read_bytes().strip():
            return f"{ld_preload} names libraries to preload"
        if not _system_loader(executable.interpreter):
            return f"{python} is run by the loader {executable.interpreter}, whose cache and directories are its own"
        roots = [p for p in (directory / "lib" / "libtorch_global_deps.so", _extension(directory)) if p is not None]
        if len(roots) != 2 or not roots[0].is_file():
            return "torch has no libtorch_global_deps.so or no _C extension"
        cache = parse_ld_cache(ld_cache.read_bytes()) if ld_cache.is_file() else {}
        return _Search(environ, cache, site=os.path.realpath(directory.parent), machine=executable.machine).walk(roots)
    except (OSError, NotElf) as exc:
        return f"a library could not be read ({exc})"


def _system_loader(interpreter: str | None) -> bool:
    """Whether `interpreter` is the system's glibc loader, the one that reads /etc/ld.so.cache and DEFAULT_DIRS (a
    Nix or Homebrew glibc's loader reads neither, and finds no libstdc++ where the system's does)."""
    if interpreter is None or not os.path.basename(interpreter).startswith("ld-linux"):
        return False
    real = os.path.realpath(interpreter)
    return os.path.basename(real).startswith("ld-linux") and real.startswith(("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"))


def _extension(directory: Path) -> Path | None:
    import importlib.machinery

    found = [directory / f"_C{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    return next((p for p in found if p.is_file()), None)


def _unmet_requirement(packages: Sequence[Distribution], requires: Sequence[str]) -> str | None:
    """The first nvidia distribution torch requires that is installed at a version torch does not accept."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    installed = {d.name: d.version for d in packages}
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        version = installed.get(name)
        if name.startswith("nvidia-") and version is not None and not req.specifier.contains(version, prereleases=True):
            return f"{name} {version} is installed and torch requires {req.specifier}"
    return None


class _Search:
    """The loader's search for one process's libraries; each soname is resolved once, by its first requester."""

    def __init__(self, environ: Mapping[str, str], cache: dict[str, tuple[str, ...]], *, site: str, machine: int) -> None:
        # glibc splits it at ':' and ';', and an empty element is the current directory (a leading or trailing
        # ':' of `LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64`): os.path.join("", name) is looked up there.
        value = environ.get("LD_LIBRARY_PATH", "")
        self.library_path = tuple(value.replace(";", ":").split(":")) if value else ()
        self.cache = cache
        self.site = site + os.sep
        self.wheels = (os.path.join(site, "torch") + os.sep, os.path.join(site, "nvidia") + os.sep)
        self.machine = machine
        self.found: dict[str, tuple[str, Elf]] = {}

    def walk(self, roots: list[Path]) -> str | None:
        queue: deque[tuple[str, Elf]] = deque()
        for root in roots:
            path = os.path.realpath(root)
            elf = read_elf(Path(path))
            if elf.machine != self.machine:
                return f"{root.name} is built for another machine"
            queue.append((path, elf))
            if elf.soname:
                self.found.setdefault(elf.soname, (path, elf))
        objects = []
        while queue:
            path, elf = queue.popleft()
            objects.append(elf)
            for name in elf.needed:
                if name in self.found:
                    continue
                if len(self.found) >= MAX_LIBRARIES:
                    return "torch needs more libraries than compat reads"
                hit = self._locate(name, path, elf)
                if isinstance(hit, str):
                    return hit
                self.found[name] = hit
                if hit[1].soname:  # the loader matches a later request against a loaded object's soname too
                    self.found.setdefault(hit[1].soname, hit)
                queue.append(hit)
        return self._versions(objects)

    def _locate(self, name: str, requester: str, elf: Elf) -> tuple[str, Elf] | str:
        """Where the loader finds `name` for `requester`, or why that is not settled here."""
        if "/" in name:
            return f"{os.path.basename(requester)} needs {name} by path"
        origin = os.path.dirname(requester)
        own = tuple(self._expand(d, origin) for d in (elf.runpath or elf.rpath))
        if any(d is None for d in own):
            return f"{os.path.basename(requester)}'s run path names $LIB or $PLATFORM"
        dirs = [d for d in own if d is not None] if not elf.runpath else []
        steps = [(d, "rpath") for d in dirs] + [(d, "LD_LIBRARY_PATH") for d in self.library_path]
        steps += [(d, "runpath") for d in own if d is not None and elf.runpath]
        steps += [(os.path.dirname(p), "system") for p in self.cache.get(name, ())] + [(d, "system") for d in DEFAULT_DIRS]
        for directory, how in steps:
            candidate = os.path.join(directory, name)
            if not os.path.isfile(candidate):
                continue
            path = os.path.realpath(candidate)
            try:
                found = read_elf(Path(path))
            except OtherClass:
                continue  # a 32-bit copy (/usr/lib/i386-linux-gnu on a multilib host): skipped, as the loader skips it
            if found.machine != self.machine:
                continue  # the loader skips a library of another machine and searches on
            return self._trusted(name, path, how) or (path, found)
        return f"{name} (needed by {os.path.basename(requester)}) is not found"

    def _trusted(self, name: str, path: str, how: str) -> str | None:
        # torch's own, or a wheel torch requires at a version it accepts (checked before): where torch's run paths
        # lead, or on LD_LIBRARY_PATH only inside torch or the nvidia wheels (another package's copy is not checked).
        if path.startswith(self.site) and (how in ("rpath", "runpath") or path.startswith(self.wheels)):
            return None
        if name.startswith(RUNTIME):
            return None  # from the system or LD_LIBRARY_PATH: its symbol versions are checked
        return f"{name} comes from {path} ({how}), which torch was not built with"

    @staticmethod
    def _expand(entry: str, origin: str) -> str | None:
        if "$LIB" in entry or "${LIB}" in entry or "$PLATFORM" in entry or "${PLATFORM}" in entry:
            return None
        return entry.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)

    def _versions(self, objects: list[Elf]) -> str | None:
        """The first symbol version an object needs that the library found for it does not define."""
        for elf in objects:
            for name, versions in elf.wants:
                provider = self.found.get(name)
                if provider is None:
                    return f"{name} is needed for its symbol versions but not loaded"
                lacking = [v for v in versions if v not in provider[1].defines]
                if lacking:
                    return f"{provider[0]} does not define {lacking[0]} ({elf.soname or 'torch'} needs it)"
        return None
