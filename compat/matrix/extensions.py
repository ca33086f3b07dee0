"""Packages that compile against torch (matrix/extensions.toml): which torch each release has wheels for.

flash-attn ships only an sdist on the public index; its setup.py downloads a prebuilt wheel
matching the installed torch minor, CUDA major and Python, and falls back to a long source
build otherwise. A lock therefore pins a release whose prebuilt wheels cover the chosen torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.matrix._toml import Table, read_toml
from compat.model.facts import canonical
from compat.version_text import short


@dataclass(frozen=True, kw_only=True)
class ExtensionRelease:
    versions: tuple[Version, ...]
    """Releases of the extension this row covers."""
    torch: SpecifierSet
    """torch versions with prebuilt wheels ("">=2.4,<2.9")."""
    python: SpecifierSet
    """CPython versions with prebuilt wheels."""
    cuda_majors: tuple[int, ...]
    """CUDA major versions of torch builds with prebuilt wheels (12 for cu12x)."""
    source: str
    """Where this row comes from."""


@dataclass(frozen=True, kw_only=True)
class Extension:
    package: str
    """Canonical project name ("flash-attn")."""
    min_compute_capability: str | None
    """Oldest GPU architecture the kernels run on ("8.0"); None when any."""
    releases: tuple[ExtensionRelease, ...]
    source: str
    """Where the package-wide facts come from."""

    def release(self, version: Version) -> ExtensionRelease | None:
        """The row covering `version`; None when its wheels are not curated."""
        return next((r for r in self.releases if version in r.versions), None)


@dataclass(frozen=True, kw_only=True)
class ExtensionTable:
    extensions: tuple[Extension, ...]

    def find(self, package: str) -> Extension | None:
        key = canonical(package)
        return next((e for e in self.extensions if e.package == key), None)


def load_extensions(tables: Sequence[Table]) -> ExtensionTable:
    """Parse every extensions.toml (shipped first, overlays after; a later entry replaces an earlier one)."""
    found: dict[str, Extension] = {}
    for table in tables:
        table.only("extension")
        for et in table.tables("extension", ()):
            ext = _parse_extension(et)
            found[ext.package] = ext
    return ExtensionTable(extensions=tuple(found[k] for k in sorted(found)))


def load_extensions_from(roots: Sequence[Path]) -> ExtensionTable:
    """extensions.toml of each matrix root that has one (shipped root labelled matrix/...)."""
    tables = []
    for i, root in enumerate(roots):
        path = root / "extensions.toml"
        if path.is_file():
            tables.append(read_toml(path, label="matrix/extensions.toml" if i == 0 else str(path)))
    return load_extensions(tables)


def _parse_extension(t: Table) -> Extension:
    t.only("package", "min_compute_capability", "source", "release")
    cc = t.str("min_compute_capability", None)
    if cc is not None:
        try:
            Version(cc)
        except ValueError:  # InvalidVersion, or a number longer than int() reads
            t.fail("min_compute_capability", f"{short(cc)} is not a compute capability (e.g. '8.0')")
    releases = []
    for rt in t.tables("release"):
        rt.only("versions", "torch", "python", "cuda_majors", "source")
        versions = []
        for i, text in enumerate(rt.strs("versions")):
            try:
                versions.append(Version(text))
            except ValueError:  # InvalidVersion, or a number longer than int() reads
                rt.fail(f"versions[{i}]", f"{short(text)} is not a version")
        if not versions:
            rt.fail("versions", "must name at least one release")
        majors = rt._get("cuda_majors", list, "a list of integers", None)
        if not majors or not all(isinstance(m, int) and not isinstance(m, bool) for m in majors):
            rt.fail("cuda_majors", "expected a non-empty list of integers")
        releases.append(
            ExtensionRelease(
                versions=tuple(versions),
                torch=rt.specifier("torch"),
                python=rt.specifier("python"),
                cuda_majors=tuple(majors),
                source=rt.str("source"),
            )
        )
    return Extension(
        package=canonical(t.str("package")),
        min_compute_capability=cc,
        releases=tuple(releases),
        source=t.str("source"),
    )
