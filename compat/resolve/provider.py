"""The resolvelib model: what is asked (`Need`), what may answer (`Candidate`), and the provider over the snapshot."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from resolvelib.providers import AbstractProvider
from resolvelib.structs import RequirementInformation

from compat.judge.torch_build import TorchBuildChoice, same_cuda_major_as_default
from compat.matrix import Matrix
from compat.matrix.releases import PackageReleases
from compat.model.asker import Asker, AskerKind
from compat.model.rejection import Rejection, RejectionKind
from compat.resolve.filters import Filters, contains
from compat.resolve.links import links_for

# Packages whose public wheels carry CUDA kernels built for the CUDA major of torch's public-index
# build: with a torch of another CUDA major their extension fails to load (`libcudart.so.13:
# cannot open shared object file`, vllm-project/vllm#44335); within the major they run.
BUILT_AGAINST_DEFAULT_TORCH = frozenset({"vllm", "xformers", "flashinfer-python"})

PROBE = Asker(kind=AskerKind.PROBE)


@dataclass(frozen=True, kw_only=True)
class Need:
    """One requirement the resolver must meet, and who asked for it."""

    name: str
    """Canonical project name."""
    extras: frozenset[str]
    """Extras asked for."""
    specifier: SpecifierSet
    """The range asked for."""
    asker: Asker
    """Who asked."""
    default_build: bool = False
    """torch must have the CUDA major of its public-index build: the asker's kernels were built for it."""

    @property
    def identifier(self) -> str:
        return ident(self.name, self.extras)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    name: str
    """Canonical project name."""
    version: Version | None
    """None for a package the snapshot does not track (pip resolves it)."""
    extras: frozenset[str] = frozenset()
    """Extras this candidate stands for (one resolvelib identifier per extras set)."""
    variant: str | None = None
    """torch build tag ("cu126"); None for a non-torch package or an unknown build."""
    default_variant: bool = True
    """`variant` is what the public index serves."""
    requires: tuple[Requirement, ...] = ()
    """The release's declared requirements."""
    requires_known: bool = True
    """False for an sdist-only release: its requirements are unknown to the matrix."""

    @property
    def identifier(self) -> str:
        return ident(self.name, self.extras)

    def asker(self) -> Asker:
        return Asker(kind=AskerKind.PACKAGE, package=self.name, version=str(self.version) if self.version else None,
                     extras=tuple(sorted(self.extras)))


def ident(name: str, extras: Iterable[str]) -> str:
    ordered = sorted(extras)
    return f"{name}[{','.join(ordered)}]" if ordered else name


def is_exact(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def is_pin(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") for s in spec)


class Provider(AbstractProvider[Need, Candidate, str]):
    """resolvelib provider over the release snapshot."""

    def __init__(
        self,
        matrix: Matrix,
        filters: Filters,
        constraints: Mapping[str, Sequence[Need]],
        excluded: Mapping[str, Sequence[SpecifierSet]],
        preferred: Mapping[str, Version],
        user: frozenset[str],
    ) -> None:
        self.matrix = matrix
        self.filters = filters
        self.constraints = constraints
        self.excluded = excluded
        self.preferred = preferred
        self.user = user
        self._releases: dict[str, PackageReleases | None] = {}
        self._fits: dict[tuple[str, str, bool], bool] = {}
        self._dead: dict[tuple[str, str, frozenset[str]], Rejection | None] = {}
        self.links = links_for(getattr(matrix, "roots", None))

    # resolvelib interface -------------------------------------------------

    def identify(self, requirement_or_candidate: Need | Candidate) -> str:
        return requirement_or_candidate.identifier

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Sequence[RequirementInformation[Need, Candidate]],
    ) -> tuple[bool, bool, bool, bool, str]:
        pinned = any(is_pin(info.requirement.specifier) for info in information[identifier])
        causes = {c.requirement.name for c in backtrack_causes}
        name = identifier.split("[")[0]
        # Exact pins and conflict sources first (fail fast), torch last: many packages narrow it.
        return (not pinned, name not in causes, name == "torch", name not in self.user, identifier)

    def find_matches(
        self, identifier: str, requirements: Mapping[str, Iterator[Need]], incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> list[Candidate]:
        name = identifier.split("[")[0]
        extras = frozenset(identifier[len(name) + 1 : -1].split(",")) if "[" in identifier else frozenset()
        needs = list(requirements[identifier]) + list(self.constraints.get(name, ()))
        bad = {c.version for c in incompatibilities[identifier]}
        releases = self.releases(name)
        if releases is None:
            return [Candidate(name=name, version=None, extras=extras)] if None not in bad else []
        spec = SpecifierSet()
        for need in needs:
            spec &= need.specifier
        exact = {
            Version(s.version)
            for need in needs
            for s in need.specifier
            if s.operator in ("==", "===") and "*" not in s.version
        }
        kernels = next((n.asker for n in needs if n.default_build), None)
        out = []
        for release in reversed(releases.releases):
            v = release.version
            if v in bad or not contains(spec, v, True if v in exact else None):
                continue
            if any(contains(s, v, True) for s in self.excluded.get(name, ())):
                continue
            key = (name, str(v))
            if release.yanked and v not in exact:
                self.filters.rejected[key] = Rejection(kind=RejectionKind.YANKED, package=name, version=str(v),
                                                       yanked_reason=release.yanked_reason or None)
                continue
            why = self.filters.release_fits(name, release)
            variant, is_default = None, True
            if why is None and name == "torch":
                build = self._torch_for(v, kernels)
                if isinstance(build, Rejection):
                    why = build
                else:
                    variant, is_default = build.variant, build.default
            if why is not None:
                self.filters.rejected[key] = why
                continue
            known = isinstance(release.requires, tuple)  # Unknown (sdist only) or, in old snapshots, None
            requires = release.requires if isinstance(release.requires, tuple) else ()
            dead = self._dead_dependency(name, v, requires, extras)
            if dead is not None:
                self.filters.rejected[key] = dead
                continue
            link = next((r for n in needs if (r := self.links.rejection(n.asker, name, str(v))) is not None), None)
            if link is not None:
                self.filters.rejected[key] = link
                continue
            out.append(
                Candidate(
                    name=name,
                    version=v,
                    extras=extras,
                    variant=variant,
                    default_variant=is_default,
                    requires=requires,
                    requires_known=known,
                )
            )
        want = self.preferred.get(name)
        if want is not None:
            out.sort(key=lambda c: c.version != want)  # stable: newest-first order kept otherwise
        return out

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        if candidate.version is None:
            return True
        if requirement.default_build and not same_cuda_major_as_default(self.filters.matrix, str(candidate.version), candidate.variant):
            return False
        if self.links.rejection(requirement.asker, candidate.name, str(candidate.version)) is not None:
            return False
        return contains(requirement.specifier, candidate.version, True)

    def get_dependencies(self, candidate: Candidate) -> list[Need]:
        if candidate.version is None:
            return []
        deps: list[Need] = []
        if candidate.extras:
            deps.append(Need(name=candidate.name, extras=frozenset(), specifier=SpecifierSet(f"=={candidate.version}"),
                             asker=candidate.asker()))
        for req in candidate.requires:
            if not self.filters.markers_hold(req, candidate.extras):
                continue
            dep = str(canonicalize_name(req.name))
            deps.append(
                Need(
                    name=dep,
                    extras=frozenset(str(canonicalize_name(e)) for e in req.extras),
                    specifier=req.specifier,
                    asker=candidate.asker(),
                    default_build=dep == "torch" and candidate.name in BUILT_AGAINST_DEFAULT_TORCH,
                )
            )
        deps.extend(self._extension_needs(candidate))
        return deps

    def narrow_requirement_selection(
        self,
        identifiers: Iterable[str],
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Sequence[RequirementInformation[Need, Candidate]],
    ) -> Iterable[str]:
        return identifiers

    # ----------------------------------------------------------------------

    def _torch_for(self, version: Version, kernels: Asker | None) -> TorchBuildChoice | Rejection:
        """The torch build for the target; when `kernels` asks for the public build's CUDA major, one of that major."""
        if kernels is None:
            return self.filters.torch_build(version)
        build = self.filters.torch_build(version, same_major=True)
        if isinstance(build, Rejection):
            plain = self.filters.torch_build(version)
            if isinstance(plain, TorchBuildChoice):
                # Say which build fits and who cannot use it, rather than listing every build.
                return Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version=str(version),
                                 variant=plain.variant, asker=kernels)
        return build

    def _extension_needs(self, cand: Candidate) -> list[Need]:
        ext = self.filters.extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras:
            return []
        row = ext.release(cand.version)
        if row is None:
            return []
        asker = Asker(kind=AskerKind.EXTENSION_TABLE, package=cand.name, version=str(cand.version))
        return [Need(name="torch", extras=frozenset(), specifier=row.torch, asker=asker)]

    def _dead_dependency(self, name: str, version: Version, requires: Sequence[Requirement], extras: frozenset[str]) -> Rejection | None:
        key = (name, str(version), extras)
        if key not in self._dead:
            self._dead[key] = self._find_dead(name, version, requires, extras)
        return self._dead[key]

    def _find_dead(self, name: str, version: Version, requires: Sequence[Requirement], extras: frozenset[str]) -> Rejection | None:
        """Why a release can never be part of the set: a requirement no release fits (one level of lookahead).

        Without it the resolver discovers, one vLLM release after another, that each pinned torch
        has no build for this GPU or driver; pruning here keeps a lock well under a second.
        """
        for req in requires:
            if not self.filters.markers_hold(req, frozenset()) and not (extras and self.filters.markers_hold(req, extras)):
                continue
            dep = str(canonicalize_name(req.name))
            kernels = dep == "torch" and name in BUILT_AGAINST_DEFAULT_TORCH
            if not self._any_fits(dep, req.specifier, default_build=kernels):
                return Rejection(
                    kind=RejectionKind.DEAD_DEPENDENCY, package=name, version=str(version), dependency=dep,
                    specifier=str(req.specifier), exact=is_exact(req.specifier),
                    because=self._first_reason(dep, req.specifier, kernels=self._asker(name, version, extras) if kernels else None),
                )
        return None

    def _any_fits(self, name: str, spec: SpecifierSet, *, default_build: bool = False) -> bool:
        key = (name, str(spec), default_build)
        if key not in self._fits:
            releases = self.releases(name)
            if releases is None:
                self._fits[key] = True
            else:
                need = Need(name=name, extras=frozenset(), specifier=spec, asker=PROBE, default_build=default_build)
                self._fits[key] = bool(self._plain_matches(name, releases, [need]))
        return self._fits[key]

    def _plain_matches(self, name: str, releases: PackageReleases, needs: Sequence[Need]) -> list[Version]:
        spec = SpecifierSet()
        for need in list(needs) + list(self.constraints.get(name, ())):
            spec &= need.specifier
        exact = is_exact(spec)
        same_major = any(n.default_build for n in needs)
        out = []
        for release in reversed(releases.releases):
            v = release.version
            if not contains(spec, v, True if exact else None):
                continue
            if any(contains(s, v, True) for s in self.excluded.get(name, ())):
                continue
            if release.yanked and not exact:
                continue
            if self.filters.release_fits(name, release) is not None:
                continue
            if name == "torch" and isinstance(self.filters.torch_build(v, same_major=same_major), Rejection):
                continue
            out.append(v)
        return out

    def _first_reason(self, name: str, spec: SpecifierSet, *, kernels: Asker | None) -> Rejection | None:
        """Why the newest release of `name` in `spec` was dropped; None when no release is in range."""
        releases = self.releases(name)
        if releases is None:
            return None
        for release in reversed(releases.releases):
            if spec.contains(release.version, prereleases=True):
                why = self.filters.release_fits(name, release)
                if why is None and name == "torch":
                    build = self._torch_for(release.version, kernels)
                    why = build if isinstance(build, Rejection) else None
                if why is not None:
                    return why
        return None

    @staticmethod
    def _asker(name: str, version: Version, extras: frozenset[str]) -> Asker:
        return Asker(kind=AskerKind.PACKAGE, package=name, version=str(version), extras=tuple(sorted(extras)))

    def releases(self, name: str) -> PackageReleases | None:
        if name not in self._releases:
            self._releases[name] = self.matrix.releases.get(name)
        return self._releases[name]
