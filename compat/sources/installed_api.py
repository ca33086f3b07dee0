"""The API of an installed release read from its files with `ast`, never imported: what doctor's link
check reads when the API index has not read that release (compat/timeline/links.py).

`installed_releases(python, packages)` asks the interpreter for its sys.path once, then each package's
modules are found and parsed on first use. What a file cannot say for certain (a module `__getattr__`,
a lazy `_import_structure`, a star import) answers Unknown, never "absent". A release's imports are kept in
compat's cache under the size and mtime of every module read, so a warm doctor stats the files instead of
parsing them again (an install, edit or removal changes the key; an unreadable entry is read again).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

from compat.model.unknown import Unknown
from compat.sources import cache
from compat.sources.probe._run import run
from compat.timeline.index import import_names
from compat.timeline.installed import defined_names, module_imports, parse_module
from compat.timeline.records import ApiKind, ImportEdge, ImportKind, Span

MAX_MODULES = 600
"""Modules read per package for its imports; a larger package answers Unknown (the index should hold it)."""

_SYS_PATH = "import json, sys; print(json.dumps(sys.path))"


class InstalledRelease:
    """One installed release of a package, answering like the API index for that release alone."""

    def __init__(self, package: str, version: str, roots: tuple[Path, ...], *, cache_dir: Path | None = None) -> None:
        self.package = str(canonicalize_name(package))
        self.releases: tuple[str, ...] = (version,)
        self._version = version
        self._roots = roots
        """The package's top-level directories (or single-file modules) on sys.path."""
        self._names: dict[str, frozenset[str] | Unknown | None] = {}
        self.conclusive_absence = True
        """A name these files do not define is absent (the index, by contrast, may not have read it)."""
        self._edges: tuple[ImportEdge, ...] | Unknown | None = None
        self._cache_dir = cache_dir
        """Where this release's imports are kept between runs; None: read every time."""

    def _file(self, module: str) -> Path | None:
        parts = module.split(".")
        for root in self._roots:
            if root.name.removesuffix(".py") != parts[0]:
                continue
            base = root.parent.joinpath(*parts)
            for path in (base / "__init__.py", base.with_suffix(".py")):
                if path.is_file():
                    return path
        return None

    def _compiled(self, module: str) -> bool:
        parts = module.split(".")
        for root in self._roots:
            folder = root.parent.joinpath(*parts[:-1])
            if root.name.removesuffix(".py") == parts[0] and folder.is_dir() and any(folder.glob(f"{parts[-1]}.*.so")):
                return True
        return False

    def _module_names(self, module: str) -> frozenset[str] | Unknown | None:
        """The names `module` defines at module level; None when there is no such module."""
        if module not in self._names:
            path = self._file(module)
            if path is None:
                self._names[module] = Unknown(reason=f"{module} is compiled") if self._compiled(module) else None
            else:
                self._names[module] = _defined(path)
        return self._names[module]

    def present(self, kind: ApiKind, key: str) -> tuple[Span, ...]:
        has = self.has(kind, key, self._version)
        return (Span(first=self._version, last=self._version),) if has is True else ()

    def has(self, kind: ApiKind, key: str, release: str) -> bool | Unknown:
        if release != self._version:
            return Unknown(reason=f"only {self.package} {self._version} is installed")
        if kind is ApiKind.MODULE:
            return self._file(key) is not None or self._compiled(key)
        if kind is ApiKind.NAME:
            module, _, name = key.partition(":")
            names = self._module_names(module)
            if names is None:
                return False
            if isinstance(names, Unknown):
                return names
            return name in names or self._file(f"{module}.{name}") is not None
        return Unknown(reason=f"installed files are not read for {kind.value} keys")

    def imports(self, release: str, other: str) -> tuple[ImportEdge, ...] | Unknown:
        if release != self._version:
            return Unknown(reason=f"only {self.package} {self._version} is installed")
        if self._edges is None:
            self._edges = self._read_edges()
        if isinstance(self._edges, Unknown):
            return self._edges
        targets = import_names(other)
        return tuple(e for e in self._edges if e.target.split(".")[0] in targets)

    def _read_edges(self) -> tuple[ImportEdge, ...] | Unknown:
        files = self._module_files()
        if len(files) > MAX_MODULES:
            return Unknown(reason=f"{self.package} has {len(files)} modules: too many to read at check time")
        entry = self._entry(files)
        kept = _load_edges(entry) if entry is not None else None
        if kept is not None:
            return kept
        edges: set[ImportEdge] = set()
        own = {r.name.removesuffix(".py") for r in self._roots}
        for module, path in files:
            tree = _parse(path)
            if tree is not None:
                edges.update(e for e in module_imports(tree, module) if e.target.split(".")[0] not in own)
        found = tuple(sorted(edges, key=lambda e: (e.module, e.target, e.name or "", e.kind.value)))
        if entry is not None:
            cache.store(entry, _dump_edges(found))
        return found

    def _module_files(self) -> list[tuple[str, Path]]:
        files: list[tuple[str, Path]] = []
        for root in self._roots:
            if root.is_file():
                files.append((root.stem, root))
                continue
            for path in sorted(root.rglob("*.py")):
                rel = path.relative_to(root.parent).with_suffix("")
                parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                files.append((".".join(parts), path))
        return files

    def _entry(self, files: list[tuple[str, Path]]) -> Path | None:
        """The cache file for these modules as they are now: named by their paths, sizes and mtimes."""
        if self._cache_dir is None:
            return None
        digest = hashlib.sha256(f"{self.package}=={self._version}".encode())
        for module, path in files:
            try:
                st = path.stat()
            except OSError:
                return None
            digest.update(f"\0{module}\0{path}\0{st.st_size}\0{st.st_mtime_ns}".encode())
        name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{self.package}-{self._version}")
        return self._cache_dir / f"{name}-{digest.hexdigest()[:24]}.json"


def _dump_edges(edges: tuple[ImportEdge, ...]) -> bytes:
    return json.dumps([[e.module, e.target, e.name, e.kind.value] for e in edges]).encode()


def _load_edges(path: Path) -> tuple[ImportEdge, ...] | None:
    """A kept list of imports; None when absent or not one (it is then read again and rewritten)."""
    data = cache.load(path)
    if data is None:
        return None
    try:
        rows = json.loads(data)
        edges = tuple(ImportEdge(module=m, target=t, name=n, kind=ImportKind(k)) for m, t, n, k in rows)
    except (ValueError, TypeError):
        return None
    ok = all(isinstance(e.module, str) and isinstance(e.target, str) and isinstance(e.name, (str, type(None)))
             for e in edges)
    return edges if ok else None


def _parse(path: Path) -> ast.Module | None:
    try:
        source = path.read_bytes()
    except OSError:
        return None
    return parse_module(source, str(path))


def _defined(path: Path) -> frozenset[str] | Unknown:
    tree = _parse(path)
    if tree is None:
        return Unknown(reason=f"{path.name} could not be read")
    return defined_names(tree, path.name)


def site_dirs(python: str | Path, *, timeout: float = 30.0) -> tuple[Path, ...] | Unknown:
    """The interpreter's sys.path directories (it runs with -I: no user site, no PYTHONPATH)."""
    result = run([str(python), "-I", "-c", _SYS_PATH], timeout=timeout)
    if not result.ok:
        return Unknown(reason=result.problem or "the interpreter did not answer")
    try:
        entries = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Unknown(reason="the interpreter printed no sys.path")
    return tuple(Path(e) for e in entries if isinstance(e, str) and e and Path(e).is_dir())


def installed_releases(dirs: tuple[Path, ...], packages: Mapping[str, str], *,
                       cache_dir: Path | None = None) -> dict[str, InstalledRelease]:
    """`{package: its installed release}` for each package (name -> version) whose modules are on `dirs`; with a
    `cache_dir`, each release keeps its imports there between runs."""
    out: dict[str, InstalledRelease] = {}
    for package, version in packages.items():
        roots: list[Path] = []
        for name in import_names(package):
            for d in dirs:
                for candidate in (d / name, d / f"{name}.py"):
                    if (candidate / "__init__.py").is_file() or candidate.is_file():
                        roots.append(candidate)
                        break
                else:
                    continue
                break
        if roots:
            out[str(canonicalize_name(package))] = InstalledRelease(package, version, tuple(roots), cache_dir=cache_dir)
    return out
