"""Which releases fit the target, and a `Rejection` for each one that does not.

Every release is filtered before the resolver sees it: Requires-Python, PEP 508 markers evaluated
for the target interpreter and platform, and for torch the build `choose_torch_build` finds for
the GPUs and driver. Packages that compile against torch (matrix/extensions.toml) must have
prebuilt wheels for the target, and add a requirement on the torch those wheels were built for.
"""

from __future__ import annotations

import functools

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.judge.torch_build import (
    TorchBuildChoice,
    TorchBuildPolicy,
    choose_torch_build,
)
from compat.matrix import Matrix
from compat.matrix.extensions import Extension, ExtensionTable
from compat.matrix.releases import Release
from compat.model.facts import Facts
from compat.model.rejection import Rejection, RejectionKind
from compat.model.torch_variant import TorchVariant
from compat.resolve.hardware import TargetHardware


def contains(spec: SpecifierSet, version: Version, prereleases: bool | None) -> bool:
    # Answers are cached per (specifier text, version): hashing a SpecifierSet canonicalizes every
    # clause on each call, which cost more than the question itself while the resolver backtracks.
    return contains_text(str(spec), version, prereleases)


@functools.lru_cache(maxsize=200_000)
def contains_text(spec: str, version: Version, prereleases: bool | None) -> bool:
    return _spec(spec).contains(version, prereleases=prereleases)


@functools.lru_cache(maxsize=20_000)
def _spec(text: str) -> SpecifierSet:
    return SpecifierSet(text)


class Filters:
    """Which releases fit the target; `rejected` keeps the reason each dropped release was dropped for."""

    def __init__(
        self, facts: Facts, matrix: Matrix, extensions: ExtensionTable, hw: TargetHardware, minor_compat: bool,
        exclude_newer: str | None = None, source_builds: frozenset[str] = frozenset(),
    ) -> None:
        self.exclude_newer = exclude_newer
        # Extensions the targets pin to one release: that release is installed whatever its wheels cover (pip builds
        # it from source where no prebuilt wheel fits), so its wheels never hold torch back.
        self.source_builds = source_builds
        self.matrix = matrix
        self.extensions = extensions
        self.hw = hw
        self.minor_compat = minor_compat
        self.env = dict(facts.python.markers)
        self.python = facts.python.version
        self.rejected: dict[tuple[str, str], Rejection] = {}
        self._torch: dict[tuple[str, bool, TorchVariant | None, frozenset[str]], TorchBuildChoice | Rejection] = {}
        self._markers: dict[tuple[int, frozenset[str]], bool] = {}
        self._fits: dict[tuple[str, Version, bool], Rejection | None] = {}
        self._held: list[Requirement] = []

    def markers_hold(self, req: Requirement, extras: frozenset[str]) -> bool:
        if req.marker is None:
            return not extras
        # Requirement objects are parsed once per text and shared (compat.matrix.releases), so their
        # identity is a key that stays valid for the run; formatting a marker costs more than the check.
        key = (id(req), extras)
        if key not in self._markers:
            self._held.append(req)  # keeps the object (and so its id) alive while the key is in use
            self._markers[key] = self._markers_hold(req, extras)
        return self._markers[key]

    def _markers_hold(self, req: Requirement, extras: frozenset[str]) -> bool:
        if req.marker is None:
            return not extras
        try:
            if not extras:
                return req.marker.evaluate({**self.env, "extra": ""})
            return any(req.marker.evaluate({**self.env, "extra": e}) for e in extras) and not req.marker.evaluate({**self.env, "extra": ""})
        except (UndefinedEnvironmentName, UndefinedComparison):
            return False

    def torch_build(self, version: Version, *, same_major: bool = False, variant: TorchVariant | None = None,
                    other_majors: frozenset[str] = frozenset()) -> TorchBuildChoice | Rejection:
        """The build of torch `version` for the target; with `same_major`, only one of its public build's CUDA major
        or of `other_majors`; with `variant`, only that build (a pin with a local tag)."""
        if other_majors and variant is None and not self._driver_below_default_major(version):
            # Another CUDA's builds are a fallback for a driver too old for the default major (a
            # CUDA 11 driver under vLLM's CUDA 12 wheels), or a build the user pinned; with a
            # driver that runs the default major, the default builds (and older releases) win.
            other_majors = frozenset()
        key = (str(version), same_major, variant, other_majors)
        if key not in self._torch:
            policy = TorchBuildPolicy(minor_compat=self.minor_compat, same_cuda_major_as_default=same_major,
                                      other_cuda_majors=other_majors, cpu=self.hw.cpu, public_cpu=self.hw.public_cpu,
                                      variant=variant)
            self._torch[key] = choose_torch_build(
                self.matrix, str(version), gpus=self.hw.ccs, driver=self.hw.driver, python=self.python, policy=policy,
            )
        return self._torch[key]

    def _driver_below_default_major(self, version: Version) -> bool:
        """Whether the target's driver runs no CUDA of the major of torch `version`'s public build."""
        release = self.matrix.torch.release(str(version))
        default = release.default_cuda if release is not None else None
        if default is None or self.hw.max_cuda is None:
            return False
        return int(self.hw.max_cuda.split(".")[0]) < int(default.split(".")[0])

    def release_fits(self, name: str, release: Release, extension_gate: bool = True) -> Rejection | None:
        """None when the release fits the target, else why not."""
        key = (name, release.version, extension_gate)
        if key not in self._fits:
            self._fits[key] = self._release_fits(name, release, extension_gate)
        return self._fits[key]

    def _release_fits(self, name: str, release: Release, extension_gate: bool) -> Rejection | None:
        v = release.version
        # As uv's --exclude-newer: a release uploaded after the date did not exist yet (an unknown
        # upload date cannot be placed, so it stays).
        if self.exclude_newer is not None and isinstance(release.uploaded, str) and release.uploaded > self.exclude_newer:
            return Rejection(kind=RejectionKind.UPLOADED_AFTER, package=name, version=str(v), date=self.exclude_newer)
        if release.requires_python is not None and not release.requires_python.contains(self.python, prereleases=True):
            return Rejection(kind=RejectionKind.REQUIRES_PYTHON, package=name, version=str(v), python=self.python,
                             supported=str(release.requires_python))
        if extension_gate:
            ext = self.extensions.find(name)
            if ext is not None:
                return self._extension_fits(ext, v)
        return None

    def _extension_fits(self, ext: Extension, v: Version) -> Rejection | None:
        if ext.min_compute_capability is not None:
            old = [(cc, n) for cc, n in self.hw.ccs if Version(cc) < Version(ext.min_compute_capability)]
            if old:
                return Rejection(kind=RejectionKind.EXTENSION_MIN_ARCH, package=ext.package, version=str(v),
                                 min_compute_capability=ext.min_compute_capability,
                                 compute_capability=old[0][0], gpu=old[0][1])
        if ext.package in self.source_builds:
            return None
        row = ext.release(v)
        if row is None:
            return Rejection(kind=RejectionKind.EXTENSION_NOT_CURATED, package=ext.package, version=str(v))
        if not row.python.contains(self.python, prereleases=True):
            return Rejection(kind=RejectionKind.EXTENSION_NO_PYTHON, package=ext.package, version=str(v), python=self.python)
        return None
