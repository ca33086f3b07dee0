"""Packages that compile against torch (matrix/extensions.toml): which torch each release has wheels for.

flash-attn ships only an sdist on the public index; its setup.py downloads a prebuilt wheel
matching the installed torch minor, CUDA major and Python, and falls back to a long source
build otherwise. A lock therefore pins a release whose prebuilt wheels cover the chosen torch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.matrix._by_package import find_row, index_rows
from compat.matrix._toml import Table, read_toml
from compat.model.launcher import canonical
from compat.version_text import short

_CUDA = re.compile(r"\d{1,2}\.\d{1,2}")


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
    cuda: tuple[str, ...] = ()
    """Exact CUDA versions of the torch builds with wheels ("12.8"), for a publisher that builds one wheel per torch
    build (its file name carries cu128); empty when any build of `cuda_majors` takes the wheel."""
    wheel: str | None = None
    """URL of the Linux x86_64 wheel of another publisher than the project ({version}, {cuda} as "128", {torch} as
    "2.10", {python} as "312"); None for the project's own wheels, which its setup.py fetches."""
    publisher: str | None = None
    """Who built `wheel` ("mjun0812/flash-attention-prebuild-wheels"); None for the project itself."""

    def covers(self, torch: Version, cuda: str | None, python: str) -> bool:
        """Whether this row has a wheel for torch `torch` built for `cuda` ("12.8"; None: CPU or unknown) on CPython `python`."""
        if not self.torch.contains(torch, prereleases=True) or not self.python.contains(python, prereleases=True):
            return False
        if cuda is None:
            return not self.cuda
        if self.cuda:
            return cuda in self.cuda
        return int(cuda.split(".")[0]) in self.cuda_majors

    def url(self, version: Version, torch: Version, cuda: str, python: str) -> str | None:
        """The wheel to install for this set; None for the project's own wheels (setup.py picks them)."""
        if self.wheel is None:
            return None
        return self.wheel.format(version=version, cuda=cuda.replace(".", ""), torch=f"{torch.major}.{torch.minor}",
                                 python="".join(python.split(".")[:2]))


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
        """The project's own row covering `version`, else the first publisher's; None when its wheels are not curated."""
        return next((r for r in self.rows(version) if r.wheel is None), None) or next(iter(self.rows(version)), None)

    def rows(self, version: Version) -> tuple[ExtensionRelease, ...]:
        """Every row covering `version`: the project's own wheels first, then other publishers' (by torch)."""
        return tuple(r for r in self.releases if version in r.versions)

    def wheel_for(self, version: Version, torch: Version, cuda: str | None, python: str) -> ExtensionRelease | None:
        """The row with a wheel of `version` for this torch build and Python (the project's own first); None when none."""
        return next((r for r in self.rows(version) if r.covers(torch, cuda, python)), None)


@dataclass(frozen=True, kw_only=True)
class ExtensionTable:
    extensions: tuple[Extension, ...]

    def find(self, package: str) -> Extension | None:
        return find_row(self._by_package, package)

    @functools.cached_property
    def _by_package(self) -> dict[str, Extension]:
        return index_rows(self.extensions)


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
    releases = [_parse_release(rt) for rt in t.tables("release")]
    return Extension(
        package=canonical(t.str("package")),
        min_compute_capability=cc,
        releases=tuple(releases),
        source=t.str("source"),
    )


def _parse_release(rt: Table) -> ExtensionRelease:
    rt.only("versions", "torch", "python", "cuda_majors", "cuda", "wheel", "publisher", "source")
    versions = rt.versions("versions")
    cudas = tuple(rt.strs("cuda", ()))
    for i, text in enumerate(cudas):
        if not _CUDA.fullmatch(text):
            rt.fail(f"cuda[{i}]", f"{short(text)} is not a CUDA version (e.g. '12.8')")
    if cudas:
        # One wheel per torch build: the majors follow from the exact versions.
        if "cuda_majors" in rt:
            rt.fail("cuda_majors", "give either `cuda` (exact versions) or `cuda_majors`, not both")
        majors = sorted({int(c.split(".")[0]) for c in cudas})
    else:
        majors = rt._get("cuda_majors", list, "a list of integers", None)
        if not majors or not all(isinstance(m, int) and not isinstance(m, bool) for m in majors):
            rt.fail("cuda_majors", "expected a non-empty list of integers")
    wheel = rt.str("wheel", None)
    publisher = rt.str("publisher", None)
    if wheel is not None:
        if not wheel.startswith("https://") or "{version}" not in wheel or "{python}" not in wheel:
            rt.fail("wheel", "must be an https URL with {version} and {python} in it")
        if publisher is None:
            rt.fail("publisher", "a `wheel` of another publisher names who built it")
        if "{cuda}" in wheel and not cudas:
            rt.fail("cuda", "a wheel named by {cuda} lists the exact CUDA versions it was built for")
    elif publisher is not None:
        rt.fail("wheel", "a `publisher` row gives the URL of its wheels")
    return ExtensionRelease(
        versions=tuple(versions),
        torch=rt.specifier("torch"),
        python=rt.specifier("python"),
        cuda_majors=tuple(majors),
        source=rt.str("source"),
        cuda=cudas,
        wheel=wheel,
        publisher=publisher,
    )
