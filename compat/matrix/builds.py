"""Packages published in one build per CUDA version, of which the default index carries one
(matrix/builds.toml).

vLLM's and xformers' wheels on the default index carry kernels for one CUDA major, the one of
torch's own default build. With a torch of another CUDA major the default wheel fails to load
(`libcudart.so.13: cannot open shared object file`), and the build of that major is the one to
install: vLLM's other builds (+cu118, +cu126, +cu129, +cu130) are GitHub release assets,
installed by URL; xformers' sit on the PyTorch index beside torch's, with the same local tag.

Some packages carry the kernels of another in a separate distribution released in lockstep with it
(flashinfer-cubin beside flashinfer-python): their versions must be equal, which no metadata says, so
`[[lockstep]]` rows say it and the resolver enforces it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.matrix._by_package import find_row, index_rows
from compat.matrix._toml import Table
from compat.model.launcher import canonical


@dataclass(frozen=True, kw_only=True)
class CudaBuild:
    cuda: str
    """CUDA version the build was compiled with ("11.8")."""
    wheel: str | None
    """URL of its Linux x86_64 wheel; {version} is the release, {python} the CPython tag digits ("310");
    None for a build on the PyTorch index."""
    python: SpecifierSet
    """CPython versions the wheel installs on."""
    source: str
    """Where the build and its file name were read."""
    tagged: bool = True
    """Its version carries the local tag ("0.7.3+cu118"); xformers' builds from 0.0.28 are bare, the
    same name as the default index's wheel of another CUDA, so only their URL tells them apart."""

    @property
    def major(self) -> str:
        return self.cuda.split(".")[0]

    @property
    def local(self) -> str:
        """Its local version tag ("cu118")."""
        return "cu" + self.cuda.replace(".", "")

    def url(self, version: str, python: str) -> str | None:
        """The wheel of `version` for CPython `python` ("3.10"); None for a build on the PyTorch index."""
        return self.wheel.format(version=version, python="".join(python.split(".")[:2])) if self.wheel else None


@dataclass(frozen=True, kw_only=True)
class BuildRelease:
    versions: tuple[Version, ...]
    """Releases this row covers."""
    default_cuda: str
    """CUDA version of the wheel on the default index ("12.1")."""
    builds: tuple[CudaBuild, ...]
    """Its other builds."""
    source: str
    """Where the default build's CUDA was read."""


@dataclass(frozen=True, kw_only=True)
class PackageBuilds:
    package: str
    """Canonical project name ("vllm")."""
    releases: tuple[BuildRelease, ...]

    def release(self, version: Version) -> BuildRelease | None:
        return next((r for r in self.releases if version in r.versions), None)


@dataclass(frozen=True, kw_only=True)
class Lockstep:
    package: str
    """Canonical name of the companion distribution ("flashinfer-cubin")."""
    follows: str
    """Canonical name of the package whose version it must equal ("flashinfer-python")."""
    source: str
    """Where the coupling is documented (the runtime check that refuses a mismatch)."""


@dataclass(frozen=True, kw_only=True)
class BuildTable:
    packages: tuple[PackageBuilds, ...] = ()
    lockstep: tuple[Lockstep, ...] = ()
    """Companion distributions whose version must equal another package's."""

    def follows(self, package: str) -> Lockstep | None:
        """The package whose version `package` must equal; None when it is released on its own."""
        return find_row(self._follows, package)

    @functools.cached_property
    def _follows(self) -> dict[str, Lockstep]:
        return index_rows(self.lockstep)

    def builds(self, package: str, version: Version, python: str) -> tuple[CudaBuild, ...]:
        """The builds of `package` `version` besides the default index's that install on `python`."""
        key = canonical(package)
        entry = next((p for p in self.packages if p.package == key), None)
        row = entry.release(version) if entry is not None else None
        if row is None:
            return ()
        return tuple(b for b in row.builds if b.python.contains(python, prereleases=True))

    def other_majors(self, package: str, version: Version, python: str) -> frozenset[str]:
        """CUDA majors `package` `version` has a build for, besides the default index's."""
        return frozenset(b.major for b in self.builds(package, version, python))

    def build_for(self, package: str, version: Version, python: str, cuda: str) -> CudaBuild | None:
        """The build of `package` `version` to pair with a torch built for `cuda` ("11.8"): the same
        CUDA, else the newest of the same major; None when the default index's wheel is the one."""
        major = cuda.split(".")[0]
        same = [b for b in self.builds(package, version, python) if b.major == major]
        exact = [b for b in same if b.cuda == cuda]
        if exact:
            return exact[0]
        return max(same, key=lambda b: Version(b.cuda), default=None)


def load_builds(tables: Sequence[Table]) -> BuildTable:
    """Parse every builds.toml (shipped first, overlays after; a later package entry replaces an earlier one)."""
    found: dict[str, PackageBuilds] = {}
    steps: dict[str, Lockstep] = {}
    for table in tables:
        table.only("package", "lockstep")
        for pt in table.tables("package", ()):
            entry = _parse_package(pt)
            found[entry.package] = entry
        for lt in table.tables("lockstep", ()):
            lt.only("package", "follows", "source")
            step = Lockstep(package=canonical(lt.str("package")), follows=canonical(lt.str("follows")), source=lt.str("source"))
            if step.package == step.follows:
                lt.fail("follows", "a package cannot follow itself")
            steps[step.package] = step
    return BuildTable(packages=tuple(found[k] for k in sorted(found)), lockstep=tuple(steps[k] for k in sorted(steps)))


def _cuda(t: Table, key: str) -> str:
    text = t.str(key)
    try:
        Version(text)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        t.fail(key, f"{text!r} is not a CUDA version (e.g. '12.1')")
    if text.count(".") != 1:
        t.fail(key, f"{text!r} must be major.minor (e.g. '12.1')")
    return text


def _parse_package(t: Table) -> PackageBuilds:
    t.only("name", "source", "release")
    t.str("source")
    releases = []
    for rt in t.tables("release"):
        rt.only("versions", "default_cuda", "source", "build")
        versions = rt.versions("versions")
        default = _cuda(rt, "default_cuda")
        builds = []
        for bt in rt.tables("build"):
            bt.only("cuda", "wheel", "torch_index", "tagged", "python", "source")
            cuda = _cuda(bt, "cuda")
            if cuda == default:
                bt.fail("cuda", f"{cuda} is the default index's build")
            wheel = bt.str("wheel", None)
            if wheel is not None and (not wheel.startswith("https://") or "{version}" not in wheel):
                bt.fail("wheel", "must be an https URL with {version} in it")
            if (wheel is None) == (not bt.bool("torch_index", False)):
                bt.fail("", "give either `wheel` (its URL) or `torch_index = true` (on the PyTorch index, tagged +cuXYZ)")
            tagged = bt.bool("tagged", True)
            if wheel is None and not tagged:
                bt.fail("tagged", "a build on the PyTorch index is told apart by its local tag: give its `wheel` instead")
            builds.append(CudaBuild(cuda=cuda, wheel=wheel, python=bt.specifier("python"), source=bt.str("source"), tagged=tagged))
        if not builds:
            rt.fail("build", "a row needs at least one build besides the default index's")
        releases.append(BuildRelease(versions=tuple(versions), default_cuda=default, builds=tuple(builds), source=rt.str("source")))
    return PackageBuilds(package=canonical(t.str("name")), releases=tuple(releases))
