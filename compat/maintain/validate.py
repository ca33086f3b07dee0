"""`compat matrix validate`: load every part of a matrix, then check what no single loader can.

Each part (cuda, torch, gpus, extensions, signatures, every releases file) is loaded on its own so
one run reports every broken file, not only the first. Then the references between files: every
package a signature or extension names is tracked, each `fix.requires` can be met by a recorded
release, every torch.toml version is a recorded torch release, and every curated fact names a
source. Problems read `file: key: message`, like any MatrixError.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.errors import MatrixError
from compat.maintain.torch_index import LISTING, missing_builds
from compat.matrix._toml import Table, read_toml
from compat.matrix.builds import BuildTable, load_builds
from compat.matrix.cuda import load_cuda
from compat.matrix.extensions import load_extensions
from compat.matrix.gpus import load_gpus
from compat.matrix.releases import TRACKED, PackageReleases, ReleaseIndex
from compat.matrix.signatures import load_signatures
from compat.matrix.torch import TorchTable, load_torch
from compat.model.curation import Validation
from compat.regular_file import read_regular

_SOURCE = re.compile(r"https?://\S+|[\w.-]+/[\w.-]+(#\d+|@[\w.+-]+)|\bmetadata\b|pypi:[\w.-]+", re.IGNORECASE)
_SINGLE_FILES = ("cuda.toml", "torch.toml", "gpus.toml", "extensions.toml", "builds.toml")
_REQUIRED = ("cuda.toml", "torch.toml", "gpus.toml")


class _Collector:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def run(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except MatrixError as exc:
            self.problems.append(str(exc))
        return None

    def add(self, file: str, key: str, message: str) -> None:
        self.problems.append(str(MatrixError(file, key, message)))


def _read_labelled(path: Path, root: Path, shipped: bool) -> Table:
    from compat.matrix import file_label

    return read_toml(path, label=file_label(root, path, shipped))


def _check_api(out: _Collector, root: Path, shipped: bool) -> None:
    """Each package directory of root/api (the API index): schema, keys, release ranges."""
    from compat.matrix import file_label
    from compat.timeline.index_check import check_api_dir

    api = root / "api"
    for directory in sorted(api.iterdir()) if api.is_dir() else ():
        label = file_label(root, directory, shipped)
        if not directory.is_dir():
            out.add(label, "", "not a package directory of the API index")
            continue
        out.problems.extend(check_api_dir(directory, label))


def validate_matrix(
    overlays: Sequence[Path] = (),
    *,
    base: Path | None = None,
    complete: bool = True,
    audit_patterns: bool = True,
) -> Validation:
    """Check a matrix (base + overlays); `complete` also demands every tracked package and required file."""
    from compat.matrix import shipped_matrix_dir

    base = base or shipped_matrix_dir()
    out = _Collector()
    roots = _existing_roots(out, (base, *overlays))
    shipped = base == shipped_matrix_dir()
    from compat.matrix.overlay import overlay_problems

    for root in roots[1:] if shipped else roots:
        out.problems.extend(str(problem) for problem in overlay_problems(root))
    tables, sig_files = _read_tables(out, roots, shipped)
    if complete:
        _check_required(out, roots, shipped)
    loaded_tables = _load_tables(out, tables)
    signatures = out.run(lambda: load_signatures(sig_files)) or ()
    index = ReleaseIndex(tuple(root / "releases" for root in roots))
    loaded = _load_releases(out, index)
    for i, root in enumerate(roots):
        _check_api(out, root, i == 0 and shipped)
    if complete:
        _check_tracked(out, index, roots, shipped)
    known = set(TRACKED) | set(loaded)

    def label(name: str) -> str:
        return tables[name][0].file if tables[name] else name

    _check_signatures(out, signatures, known, loaded)
    _check_tables(out, label, loaded_tables, known, loaded, roots)
    _check_table_sources(out, label, loaded_tables)
    if audit_patterns and signatures:
        files = {str(st.data.get("id")): table.file for table, _ in sig_files for st in table.tables("signature", ())}
        for where, key, problem in _engine_problems(signatures, files):
            out.add(where, key, problem)

    return Validation(
        roots=roots,
        problems=tuple(out.problems),
        packages=len(loaded),
        releases=sum(len(p.releases) for p in loaded.values()),
        signatures=len(signatures),
    )


def _existing_roots(out: _Collector, roots: tuple[Path, ...]) -> tuple[Path, ...]:
    for root in roots:
        if not root.is_dir():
            out.add(str(root), "", "not a directory")
    return tuple(r for r in roots if r.is_dir())


def _read_tables(out: _Collector, roots: tuple[Path, ...], shipped: bool,
                 ) -> tuple[dict[str, list[Table]], list[tuple[Table, str]]]:
    """Every single-file table of every root, and every signature file with its area (the file's stem)."""
    tables: dict[str, list[Table]] = {name: [] for name in _SINGLE_FILES}
    sig_files: list[tuple[Table, str]] = []
    for i, root in enumerate(roots):
        as_shipped = i == 0 and shipped
        for name in _SINGLE_FILES:
            path = root / name
            if path.is_file():
                table = out.run(functools.partial(_read_labelled, path, root, as_shipped))
                if table is not None:
                    tables[name].append(table)
        sig_dir = root / "signatures"
        for path in sorted(sig_dir.glob("*.toml")) if sig_dir.is_dir() else ():
            table = out.run(functools.partial(_read_labelled, path, root, as_shipped))
            if table is not None:
                sig_files.append((table, path.stem))
    return tables, sig_files


def _check_required(out: _Collector, roots: tuple[Path, ...], shipped: bool) -> None:
    from compat.matrix import file_label

    for name in _REQUIRED:
        if roots and not (roots[0] / name).is_file():
            out.add(file_label(roots[0], roots[0] / name, shipped), "", "missing")


@dataclass(frozen=True, kw_only=True)
class _Tables:
    """The curated tables that loaded (None: absent, or the load failed and said why)."""

    cuda: Any
    torch: Any
    gpus: Any
    extensions: Any
    builds: Any


def _load_tables(out: _Collector, tables: dict[str, list[Table]]) -> _Tables:
    def load(name: str, loader: Callable[[list[Table]], Any]) -> Any:
        return out.run(lambda: loader(tables[name])) if tables[name] else None

    # In this order, so that the problems are listed as before: cuda, torch, gpus, extensions, builds.
    cuda = load("cuda.toml", load_cuda)
    torch = load("torch.toml", load_torch)
    gpus = load("gpus.toml", load_gpus)
    extensions = load("extensions.toml", load_extensions)
    builds = load("builds.toml", load_builds)
    return _Tables(cuda=cuda, torch=torch, gpus=gpus, extensions=extensions, builds=builds)


def _load_releases(out: _Collector, index: ReleaseIndex) -> dict[str, PackageReleases]:
    loaded: dict[str, PackageReleases] = {}
    for name in index.packages():
        if canonicalize_name(name) != name:
            out.add(f"releases/{name}.toml", "", f"file name must be the canonical name ({canonicalize_name(name)}.toml)")
            continue
        package = out.run(functools.partial(index.get, name))
        if package is not None:
            loaded[name] = package
            for release in package.releases:  # requirements are parsed lazily on load: force them here
                out.run(functools.partial(getattr, release, "requires"))
    return loaded


def _check_tracked(out: _Collector, index: ReleaseIndex, roots: tuple[Path, ...], shipped: bool) -> None:
    from compat.matrix import file_label

    for name in TRACKED:
        if name not in index.packages():
            where = file_label(roots[0], roots[0] / "releases" / f"{name}.toml", shipped) if roots else name
            out.add(where, "", "missing: every tracked package needs a releases file (run `compat matrix refresh`)")


def _check_tables(out: _Collector, label: Callable[[str], str], t: _Tables, known: set[str],
                  loaded: dict[str, PackageReleases], roots: tuple[Path, ...]) -> None:
    if t.torch is not None:
        _check_torch(out, label("torch.toml"), t.torch, loaded.get("torch"))
        _check_torch_listing(out, label("torch.toml"), t.torch, roots)
    if t.extensions is not None:
        _check_extensions(out, label("extensions.toml"), t.extensions, known, loaded)
    if t.builds is not None:
        _check_builds(out, label("builds.toml"), t.builds, known, loaded)


def _check_torch_listing(out: _Collector, where: str, torch: TorchTable, roots: tuple[Path, ...]) -> None:
    """torch.toml against the PyTorch index's listing, when the matrix (or an overlay) ships one."""
    listing = next((r / LISTING for r in reversed(roots) if (r / LISTING).is_file()), None)
    if listing is None:
        return
    try:
        text = read_regular(listing, limit=64 << 20).decode("utf-8", "replace")
    except OSError as exc:
        out.add(str(listing), "", exc.strerror or str(exc))
        return
    for key, problem in missing_builds(torch, text):
        out.add(where, key, problem)


def _check_table_sources(out: _Collector, label: Callable[[str], str], t: _Tables) -> None:
    """Every curated fact names where it comes from."""
    for name, facts in (
        ("cuda.toml", _sources(t.cuda, "toolkits", "families")),
        ("torch.toml", _sources(t.torch, "releases", "arch_lists")),
        ("gpus.toml", _sources(t.gpus, "models")),
    ):
        for key, source in facts:
            if not _SOURCE.search(source or ""):
                out.add(label(name), key, f"source {source!r} names no issue/PR (owner/repo#N), URL or release metadata")
    if t.extensions is not None:
        for ext in t.extensions.extensions:
            for key, source in [(f"extension[{ext.package}].source", ext.source)] + [
                (f"extension[{ext.package}].release[{i}].source", r.source) for i, r in enumerate(ext.releases)
            ]:
                if not _SOURCE.search(source or ""):
                    out.add(label("extensions.toml"), key, f"source {source!r} names no issue/PR, URL or release metadata")


def _sources(table: Any, *fields: str) -> list[tuple[str, str]]:
    if table is None:
        return []
    out = []
    for field in fields:
        for i, item in enumerate(getattr(table, field, ())):
            out.append((f"{field}[{i}].source", getattr(item, "source", "")))
    return out


def _check_signatures(out: _Collector, signatures: Sequence[Any], known: set[str], loaded: dict[str, PackageReleases]) -> None:
    for sig in signatures:
        # A Signature keeps its area (the file's stem), not its path; overlays share the names.
        where = f"signatures/{sig.area}.toml"
        # `when` and `fix` may name any package (numpy, tokenizers): conditions read installed
        # facts. Where the package is tracked, the fix must be something a release satisfies.
        for i, text in enumerate(sig.fix.requires):
            key = f"signature[{sig.id}].fix.requires[{i}]"
            try:
                req = Requirement(text)
            except InvalidRequirement as exc:
                out.add(where, key, f"{text!r} is not a requirement: {exc}")
                continue
            name = canonicalize_name(req.name)
            package = loaded.get(name)
            if package is not None and req.specifier and not any(
                req.specifier.contains(r.version, prereleases=True) for r in package.releases
            ):
                out.add(where, key, f"no recorded {name} release satisfies {text!r}")
        _check_placeholders(out, where, sig)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")


def _check_placeholders(out: _Collector, where: str, sig: Any) -> None:
    """`{fields}` only where a built-in check fills them: in the entry it owns, and only the names it declares.

    explain shows an entry as written, with no facts to fill it, so an entry with patterns has none;
    a plain entry's braces are literal text and must not look like a field.
    """
    from compat.judge.checks import OWNS
    from compat.judge.checks._util import fields

    texts = (("title", sig.title), ("cause", sig.cause), ("fix.advice", sig.fix.advice))
    filled = OWNS.get(sig.id)
    for name, text in texts:
        key = f"signature[{sig.id}].{name}"
        if filled is None:
            for field in _PLACEHOLDER.findall(text):
                out.add(where, key, f"{{{field}}} looks like a field, but no built-in check fills this entry")
            continue
        try:
            used = fields(text)
        except ValueError as exc:
            out.add(where, key, f"{exc} (a built-in check fills this text: write literal braces as {{{{ and }}}})")
            continue
        for field in sorted(used - filled):
            have = ", ".join(sorted(filled)) or "none"
            out.add(where, key, f"{{{field}}} is not a field its built-in check fills (it fills: {have})")
        if used and sig.patterns:
            out.add(where, key, "explain shows an entry with patterns unfilled: no {fields} in it")


def _check_torch(out: _Collector, file: str, torch: Any, releases: PackageReleases | None) -> None:
    if releases is None:
        return
    for i, rel in enumerate(getattr(torch, "releases", ())):
        if releases.find(rel.version) is None:
            out.add(file, f"release[{i}].version", f"{rel.version} is not a torch release in releases/torch.toml")


def _check_extensions(out: _Collector, file: str, extensions: Any, known: set[str], loaded: dict[str, PackageReleases]) -> None:
    for ext in extensions.extensions:
        if ext.package not in known:
            out.add(file, f"extension[{ext.package}].package", "not a tracked package")
            continue
        package = loaded.get(ext.package)
        if package is None:
            continue
        for i, row in enumerate(ext.releases):
            for version in row.versions:
                if package.find(version) is None:
                    out.add(file, f"extension[{ext.package}].release[{i}].versions", f"{version} is not a recorded {ext.package} release")


def _check_builds(out: _Collector, file: str, builds: BuildTable, known: set[str], loaded: dict[str, PackageReleases]) -> None:
    for entry in builds.packages:
        if entry.package not in known:
            out.add(file, f"package[{entry.package}].name", "not a tracked package")
            continue
        package = loaded.get(entry.package)
        for i, row in enumerate(entry.releases):
            where = f"package[{entry.package}].release[{i}]"
            sources = [(f"{where}.source", row.source)] + [(f"{where}.build[{j}].source", b.source) for j, b in enumerate(row.builds)]
            for key, source in sources:
                if not _SOURCE.search(source):
                    out.add(file, key, f"source {source!r} names no issue/PR, URL or release metadata")
            for version in row.versions:
                if package is not None and package.find(version) is None:
                    out.add(file, f"{where}.versions", f"{version} is not a recorded {entry.package} release")


__all__ = ["Validation", "validate_matrix"]


def _engine_problems(signatures: Sequence[Any], files: dict[str, str]) -> list[tuple[str, str, str]]:
    """Patterns the Hyperscan engine refuses to compile, as (file, key, problem). The loader has
    already refused what no automaton runs (back-references, lookaround); this asks the engine
    itself, when it is installed, so a pattern it rejects is caught before a user's log is."""
    try:
        import hyperscan
    except ImportError:
        return []
    out = []
    for sig in signatures:
        for field in ("patterns", "context"):
            for i, pattern in enumerate(getattr(sig, field)):
                db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
                flags = hyperscan.HS_FLAG_MULTILINE | (0 if pattern.isascii() else hyperscan.HS_FLAG_UTF8)
                try:
                    db.compile(expressions=[pattern.encode("utf-8")], ids=[0], flags=[flags])
                except hyperscan.error as exc:  # the engine's own words: say them with the file and key
                    out.append((files.get(sig.id, sig.area), f"signature {sig.id}.{field}[{i}]", f"Hyperscan cannot compile it: {exc}"))
    return out
