"""The resolvelib model: what is asked (`Need`), what may answer (`Candidate`), and the provider over the snapshot."""

from __future__ import annotations

import dataclasses
import datetime
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
from compat.matrix.extensions import ExtensionRelease
from compat.matrix.releases import PackageReleases
from compat.model.asker import Asker, AskerKind
from compat.model.lock import PinReason, PinReasonKind
from compat.model.rejection import Rejection, RejectionKind
from compat.model.torch_variant import TorchVariant
from compat.resolve.filters import Filters, contains
from compat.resolve.links import links_for

# Packages whose public wheels carry CUDA kernels built for the CUDA major of torch's public-index
# build: with a torch of another CUDA major their extension fails to load (`libcudart.so.13:
# cannot open shared object file`, vllm-project/vllm#44335); within the major they run.
from compat.resolve.needs import (  # noqa: F401 (re-exported)
    _NO_KERNELS_FROM,
    BUILT_AGAINST_DEFAULT_TORCH,
    PROBE,
    Candidate,
    Need,
    _common_majors,
    _minor,
    _missing_extra,
    built_against_default_torch,
    cpu_build_requires,
    ident,
    is_exact,
    is_pin,
)


@dataclass(frozen=True)
class _Matches:
    candidates: tuple[Candidate, ...]
    """The releases that meet the asks, best first."""
    asks: tuple[tuple[tuple[str, str], ...], ...]
    """(package, range) of each requirement each candidate makes, in the same order."""
    asked: frozenset[str]
    """The packages any of them asks for: the ones whose ranges elsewhere can rule a candidate out."""


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
        anchors: Mapping[str, Version] | None = None,
    ) -> None:
        self.anchors = dict(anchors or {})
        self.matrix = matrix
        self.filters = filters
        self.constraints = constraints
        self.excluded = excluded
        self.preferred = preferred
        self.user = user
        self._releases: dict[str, PackageReleases | None] = {}
        self._fits: dict[tuple[str, str, bool, frozenset[str]], bool] = {}
        self._majors: dict[tuple[str, Version], frozenset[str]] = {}
        self._dead: dict[tuple[str, str, frozenset[str]], Rejection | None] = {}
        self._depth: dict[str, int] = {}
        self._ranges: dict[tuple[str, frozenset[str]], int] = {}
        self._matches: dict[tuple[str, frozenset[Need]], _Matches] = {}
        self._deps: dict[tuple[str, Version, frozenset[str], TorchVariant | None], tuple[Need, ...]] = {}
        self._uploaded: dict[tuple[str, Version], str | None] = {}
        self._evidence: dict[tuple[str, Version | None, tuple[tuple[str, Version], ...]], tuple[int, PinReason]] = {}
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
    ) -> tuple[bool, bool, bool, int, int, bool, bool, str]:
        infos = list(information[identifier])
        pinned = any(is_pin(info.requirement.specifier) for info in infos)
        # The packages of a conflict and the packages that asked (pip's rule): their order among
        # themselves is then breadth first, so the bound from above is known before the pin below.
        causes = {c.requirement.name for c in backtrack_causes} | {c.parent.name for c in backtrack_causes if c.parent is not None}
        name = identifier.split("[")[0]
        # Breadth first (as pip does): transformers, which trl requires, before huggingface-hub, which
        # transformers requires; pinning the deeper package first takes its newest release before
        # the bound from above is known, and undoing that costs hundreds of backtracks.
        depth = min((0 if info.parent is None else self._depth.get(info.parent.identifier, 50) + 1) for info in infos) if infos else 50
        self._depth[identifier] = depth
        # Exact pins and conflict sources first (fail fast), torch last: many packages narrow it. Then the
        # shallowest, and among them the one with the fewest candidates left (pip's rule too): a flash-attn whose
        # wheels hold torch below 2.9 decided before trl's 40 releases makes each trl release one quick test,
        # where the other order tried every flash-attn release again after each trl backtrack (9 s against 4 s).
        # An extras spelling after its plain name: pinned first, the plain name leaves one choice.
        left = sum(1 for _ in candidates[identifier])
        return (not pinned, name not in causes, name == "torch", depth, left, "[" in identifier, name not in self.user, identifier)

    def find_matches(
        self, identifier: str, requirements: Mapping[str, Iterator[Need]], incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> list[Candidate]:
        name = identifier.split("[")[0]
        extras = frozenset(identifier[len(name) + 1 : -1].split(",")) if "[" in identifier else frozenset()
        needs = list(requirements[identifier]) + list(self.constraints.get(name, ()))
        # trl[vllm] is trl: what is asked of one spelling bounds the others, or one side is pinned
        # to a release the other can never take and the search backtracks for minutes.
        for other in requirements:
            if other != identifier and other.split("[")[0] == name:
                needs += [n for n in requirements[other] if n.asker.package != name]
        bad = {c.version for c in incompatibilities[identifier]}
        releases = self.releases(name)
        if releases is None:
            return [Candidate(name=name, version=None, extras=extras)] if None not in bad else []
        # The same asks recur thousands of times while the resolver backtracks: their answer is computed once.
        key = (identifier, frozenset(needs))
        found = self._matches.get(key)
        if found is None:
            found = self._matches[key] = self._matches_for(name, extras, releases, needs)
        held = self._held_elsewhere(name, found.asked, requirements)
        return [c for c, asks in zip(found.candidates, found.asks, strict=True)
                if c.version not in bad and not (held and self._asks_outside(asks, held))]

    def _matches_for(self, name: str, extras: frozenset[str], releases: PackageReleases, needs: Sequence[Need]) -> _Matches:
        """The releases that meet `needs`, best first; each dropped release's Rejection goes to the filters."""
        exact = {v for need in needs for v in need.exact_versions}
        in_range = self._in_range(name, releases, frozenset(n.spec_text for n in needs))
        kernels = next((n.asker for n in needs if n.default_build), None)
        others = _common_majors(needs)
        forced = next((n.variant for n in needs if n.variant), None)
        # An extra the user asked for must exist; one a dependency asks for is what pip does: dropped with a warning.
        asked = extras if any(n.asker.kind is AskerKind.TARGET for n in needs) else frozenset()
        out = []
        for i in reversed(range(len(releases.releases))):
            if not in_range >> i & 1:
                continue
            release = releases.releases[i]
            v = release.version
            key = (name, str(v))
            if release.yanked and v not in exact:
                self.filters.rejected[key] = Rejection(kind=RejectionKind.YANKED, package=name, version=str(v),
                                                       yanked_reason=release.yanked_reason or None)
                continue
            why = self.filters.release_fits(name, release) or _missing_extra(name, release, asked)
            variant, is_default = None, True
            if why is None and name == "torch":
                build = self._torch_for(v, kernels, forced, others)
                if isinstance(build, Rejection):
                    why = build
                else:
                    variant, is_default = build.variant, build.default
            if why is not None:
                self.filters.rejected[key] = why
                continue
            known = isinstance(release.requires, tuple)  # Unknown (sdist only) or, in old snapshots, None
            requires = release.requires if isinstance(release.requires, tuple) else ()
            if name == "torch" and variant is not None and variant.cuda is None:
                requires = cpu_build_requires(requires)
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
        ext = self.filters.extensions.find(name)
        if ext is not None and name not in self.filters.source_builds:
            # The release whose wheels reach the newest torch first (stable: newest first among equals): flash-attn
            # 2.8.3.post1 has the project's wheels up to torch 2.8 only, 2.8.3 another publisher's up to 2.13, and
            # taking the newest release would roll the whole stack back a year.
            out.sort(key=lambda c: self._torch_reach(ext.rows(c.version) if c.version is not None else ()), reverse=True)
        if name not in self.user:
            out = self._by_evidence(name, out, self._anchors_of(needs))
        elif name not in self.anchors:
            # A bare or ranged target beside pinned ones: what a project ran with them beats the newest
            # (`trl==0.15.2 vllm` takes vLLM 0.7.2, which TRL's CI ran; 0.7.3 hangs there, TRL's setup.py says).
            # Only exact pins anchor: a floor the user gave (`trl>=0.14`) says nothing about which release ran.
            out = self._by_evidence(name, out, self.anchors)
            # With nothing to judge it against, the newest release the ranges allow is the rule that chose it: say so
            # (not for an extension, ordered by how far its wheels reach, nor where the installed release comes first).
            if ext is None and name not in self.preferred:
                newest = PinReason(kind=PinReasonKind.NEWEST)
                out = [c if c.evidence is not None else dataclasses.replace(c, evidence=newest) for c in out]
        want = self.preferred.get(name)
        if want is not None:
            out.sort(key=lambda c: c.version != want)  # stable: newest-first order kept otherwise
        asks = tuple(self._asks(c) for c in out)
        return _Matches(candidates=tuple(out), asks=asks, asked=frozenset(dep for a in asks for dep, _ in a))

    def _asks(self, cand: Candidate) -> tuple[tuple[str, str], ...]:
        """(package, range) of each requirement `cand` will make (its extension table row included)."""
        return tuple((n.name, n.spec_text) for n in self.get_dependencies(cand) if n.name != cand.name and len(n.specifier))

    def _held_elsewhere(self, name: str, asked: frozenset[str], requirements: Mapping[str, Iterator[Need]]) -> dict[str, frozenset[str]]:
        """The ranges the rest of this branch holds each package to that `name`'s candidates ask for (what `name`
        itself asked is left out).

        flash-attn's wheels hold torch below 2.9, a vLLM or xformers release pins one torch: the releases that
        ask for a torch outside what the branch holds cannot be part of the set, and trying them one by one
        (each a round with dozens of dependencies, then a backtrack) took minutes. They are skipped up front, on
        this branch only: its candidates are computed again wherever the resolver backtracks to a state without
        that range.
        """
        out: dict[str, frozenset[str]] = {}
        for other in asked:
            if other == name or other not in requirements:
                continue
            texts = frozenset(n.spec_text for n in requirements[other] if n.asker.package != name and len(n.specifier))
            if texts:
                out[other] = texts
        return out

    def _asks_outside(self, asks: Sequence[tuple[str, str]], held: Mapping[str, frozenset[str]]) -> bool:
        """Whether one of `asks` leaves no recorded release of its package inside the ranges the branch holds it to."""
        for dep, spec in asks:
            texts = held.get(dep)
            if texts is None:
                continue
            releases = self.releases(dep)
            if releases is not None and not self._in_range(dep, releases, texts | {spec}):
                return True
        return False

    # the preference order ------------------------------------------------

    def _anchors_of(self, needs: Sequence[Need]) -> dict[str, Version]:
        """The target releases a dependency is judged against: exact target pins, and the target release that asks for it."""
        out = dict(self.anchors)
        for need in needs:
            a = need.asker
            if a.kind is AskerKind.PACKAGE and a.package in self.user and a.version and a.package not in out:
                out[a.package] = Version(a.version)
        return out

    def _by_evidence(self, name: str, found: list[Candidate], anchors: Mapping[str, Version]) -> list[Candidate]:
        """Tested together with the targets first, then contemporaneous with them, then the newest (order kept within each)."""
        if not anchors or len(found) < 2:
            return found  # nothing to choose between: the requirements pinned it
        window = self._window(anchors)
        ranked = []
        judged = tuple(sorted(anchors.items()))
        for cand in found:
            # The same release is ranked against the same anchors each time its asks change: judged once.
            key = (name, cand.version, judged)
            known = self._evidence.get(key)
            if known is None:
                known = self._evidence[key] = self._evidence_for(name, cand, anchors, window)
            rank, why = known
            ranked.append((rank, dataclasses.replace(cand, evidence=why)))
        ranked.sort(key=lambda rc: rc[0])
        return [c for _, c in ranked]

    def _evidence_for(self, name: str, cand: Candidate, anchors: Mapping[str, Version], window: str | None) -> tuple[int, PinReason]:
        shared, why = self._tested(name, cand, anchors)
        why = why or self._contemporary(name, cand, anchors, window)
        # A stack that ran more of the targets is better evidence than one that ran fewer.
        rank = -shared if shared else 1 if why is not None else 2
        if why is None:
            first = sorted(anchors)[0]
            why = PinReason(kind=PinReasonKind.NEWEST, parent=first, parent_version=str(anchors[first]))
        return rank, why

    def _tested(self, name: str, cand: Candidate, anchors: Mapping[str, Version]) -> tuple[int, PinReason | None]:
        """How well a stack vouches for this release (the targets it ran with it at the same minor, then those at the
        very version), and the best such stack; (0, None) for none."""
        best: tuple[int, PinReason | None] = (0, None)
        if cand.version is None:
            return best
        for stack in reversed(self.matrix.stacks.with_pin(name, cand.version)):  # the most recent evidence first
            shared = [(p, v) for p in sorted(anchors) if (v := stack.version(p)) is not None]
            score = len(shared) * 100 + sum(1 for p, v in shared if v == anchors[p])
            if shared and all(_minor(v) == _minor(anchors[p]) for p, v in shared) and score > best[0]:
                p, v = shared[0]
                best = (score, PinReason(kind=PinReasonKind.TESTED, parent=p, parent_version=str(v), stack=stack.id,
                                               source=stack.source, date=stack.date,
                                               tested_with=tuple(f"{q} {w}" for q, w in shared)))
        return best

    def _window(self, anchors: Mapping[str, Version]) -> str | None:
        """The end of the targets' release windows: the first upload of a later release of any anchor."""
        ends = []
        for pkg, version in anchors.items():
            releases = self.releases(pkg)
            later = [r for r in releases.releases if r.version > version] if releases else []
            uploads = [r.uploaded for r in later if isinstance(r.uploaded, str)]
            if uploads:
                ends.append(min(uploads))
        return min(ends) if ends else None

    def _contemporary(self, name: str, cand: Candidate, anchors: Mapping[str, Version], window: str | None) -> PinReason | None:
        if window is None or cand.version is None:
            return None
        mine = self._upload(name, cand.version)
        if mine is None or mine >= window:
            return None
        pkg = sorted(anchors)[0]
        anchor = self._upload(pkg, anchors[pkg])
        if anchor is None:
            return None
        days = (datetime.date.fromisoformat(mine) - datetime.date.fromisoformat(anchor)).days
        return PinReason(kind=PinReasonKind.CONTEMPORARY, parent=pkg, parent_version=str(anchors[pkg]), days=days)

    def _upload(self, name: str, version: Version) -> str | None:
        """The upload date of a recorded release (None when not recorded), looked up once per release."""
        key = (name, version)
        if key not in self._uploaded:
            releases = self.releases(name)
            release = releases.find(version) if releases else None
            self._uploaded[key] = release.uploaded if release is not None and isinstance(release.uploaded, str) else None
        return self._uploaded[key]

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        if candidate.version is None:
            return True
        if requirement.variant is not None and candidate.variant != requirement.variant:
            return False
        if requirement.default_build and not same_cuda_major_as_default(self.filters.matrix, str(candidate.version), candidate.variant,
                                                                        requirement.other_majors):
            return False
        if self.links.rejection(requirement.asker, candidate.name, str(candidate.version)) is not None:
            return False
        return contains(requirement.specifier, candidate.version, True)

    def get_dependencies(self, candidate: Candidate) -> list[Need]:
        if candidate.version is None:
            return []
        # Asked again for the same release each time the resolver comes back to it (ten times over in a hard lock);
        # what a release needs is fixed by its name, version, extras and build.
        key = (candidate.name, candidate.version, candidate.extras, candidate.variant)
        found = self._deps.get(key)
        if found is None:
            found = self._deps[key] = tuple(self._dependencies(candidate))
        return list(found)

    def _dependencies(self, candidate: Candidate) -> list[Need]:
        assert candidate.version is not None
        deps: list[Need] = []
        if candidate.extras:
            deps.append(Need(name=candidate.name, extras=frozenset(), specifier=SpecifierSet(f"=={candidate.version}"),
                             asker=candidate.asker()))
        step = self.matrix.builds.follows(candidate.name)
        if step is not None and not candidate.extras:
            # A companion released in lockstep (flashinfer-cubin): no metadata says so, its import refuses any other.
            deps.append(Need(name=step.follows, extras=frozenset(), specifier=SpecifierSet(f"=={candidate.version}"),
                             asker=candidate.asker()))
        for req in candidate.requires:
            if not self.filters.markers_hold(req, candidate.extras):
                continue
            dep = str(canonicalize_name(req.name))
            kernels = dep == "torch" and built_against_default_torch(candidate.name, candidate.version)
            deps.append(
                Need(
                    name=dep,
                    extras=frozenset(str(canonicalize_name(e)) for e in req.extras),
                    specifier=req.specifier,
                    asker=candidate.asker(),
                    default_build=kernels,
                    other_majors=self._other_majors(candidate.name, candidate.version) if kernels else frozenset(),
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

    def _other_majors(self, name: str, version: Version) -> frozenset[str]:
        key = (name, version)
        found = self._majors.get(key)
        if found is None:
            found = self._majors[key] = self.filters.matrix.builds.other_majors(name, version, self.filters.python)
        return found

    def _torch_for(self, version: Version, kernels: Asker | None, variant: TorchVariant | None = None,
                   others: frozenset[str] = frozenset()) -> TorchBuildChoice | Rejection:
        """The torch build for the target; when `kernels` asks for the public build's CUDA major, one of that major
        (or of `others`, majors the asker has other builds for); when `variant` is given, that build only."""
        if kernels is None:
            return self.filters.torch_build(version, variant=variant)
        build = self.filters.torch_build(version, same_major=True, variant=variant, other_majors=others)
        if isinstance(build, Rejection):
            plain = self.filters.torch_build(version, variant=variant)
            if isinstance(plain, TorchBuildChoice):
                # Say which build fits and who cannot use it, rather than listing every build.
                return Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version=str(version),
                                 variant=plain.variant.label if plain.variant else None, asker=kernels)
        return build

    def _extension_needs(self, cand: Candidate) -> list[Need]:
        ext = self.filters.extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras or cand.name in self.filters.source_builds:
            return []
        rows = ext.rows(cand.version)
        if not rows:
            return []
        asker = Asker(kind=AskerKind.EXTENSION_TABLE, package=cand.name, version=str(cand.version))
        return [Need(name="torch", extras=frozenset(), specifier=self._torch_span(rows), asker=asker)]

    def _torch_reach(self, rows: Sequence[ExtensionRelease]) -> Version:
        """The newest recorded torch release some row has wheels for (0 when none)."""
        torch = self.matrix.releases.get("torch")
        known = (r.version for r in torch.releases) if torch is not None else ()
        return max((v for v in known if any(r.torch.contains(v, prereleases=True) for r in rows)), default=Version("0"))

    def _torch_span(self, rows: Sequence[ExtensionRelease]) -> SpecifierSet:
        """The torch releases some row has wheels for, as one range: a specifier holds no union, so several rows
        (the project's own wheels, then another publisher's per torch minor) become the span of the recorded torch
        releases they cover, less the ones inside it none covers."""
        if len(rows) == 1:
            return rows[0].torch
        torch = self.matrix.releases.get("torch")
        known = sorted(r.version for r in torch.releases) if torch is not None else []
        inside = [v for v in known if any(r.torch.contains(v, prereleases=True) for r in rows)]
        if not inside:
            return rows[0].torch
        holes = [v for v in known if inside[0] < v < inside[-1] and v not in inside]
        return SpecifierSet(",".join([f">={inside[0]}", f"<={inside[-1]}", *(f"!={v}" for v in holes)]))

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
            kernels = dep == "torch" and built_against_default_torch(name, version)
            others = self._other_majors(name, version) if kernels else frozenset()
            if not self._any_fits(dep, req.specifier, default_build=kernels, others=others):
                return Rejection(
                    kind=RejectionKind.DEAD_DEPENDENCY, package=name, version=str(version), dependency=dep,
                    specifier=str(req.specifier), exact=is_exact(req.specifier),
                    because=self._first_reason(dep, req.specifier, kernels=self._asker(name, version, extras) if kernels else None,
                                               others=others),
                )
        return None

    def _any_fits(self, name: str, spec: SpecifierSet, *, default_build: bool = False, others: frozenset[str] = frozenset()) -> bool:
        key = (name, str(spec), default_build, others)
        if key not in self._fits:
            releases = self.releases(name)
            if releases is None:
                self._fits[key] = True
            else:
                need = Need(name=name, extras=frozenset(), specifier=spec, asker=PROBE, default_build=default_build, other_majors=others)
                self._fits[key] = self._plain_fits(name, releases, [need])
        return self._fits[key]

    def _plain_fits(self, name: str, releases: PackageReleases, needs: Sequence[Need]) -> bool:
        """Whether some release of `name` meets `needs` (the constraints and the target's filters too).

        Newest first, and the first that fits answers: for torch each release in range costs a build choice.
        """
        everything = (*needs, *self.constraints.get(name, ()))
        exact = any(n.exact_versions for n in everything)
        in_range = self._in_range(name, releases, frozenset(n.spec_text for n in everything))
        same_major = any(n.default_build for n in needs)
        others = _common_majors(needs)
        for i in reversed(range(len(releases.releases))):
            if not in_range >> i & 1:
                continue
            release = releases.releases[i]
            if release.yanked and not exact:
                continue
            if self.filters.release_fits(name, release) is not None:
                continue
            if name == "torch" and isinstance(self.filters.torch_build(release.version, same_major=same_major, other_majors=others),
                                              Rejection):
                continue
            return True
        return False

    def _first_reason(self, name: str, spec: SpecifierSet, *, kernels: Asker | None,
                      others: frozenset[str] = frozenset()) -> Rejection | None:
        """Why the newest release of `name` in `spec` was dropped; None when no release is in range."""
        releases = self.releases(name)
        if releases is None:
            return None
        for release in reversed(releases.releases):
            if spec.contains(release.version, prereleases=True):
                why = self.filters.release_fits(name, release)
                if why is None and name == "torch":
                    build = self._torch_for(release.version, kernels, others=others)
                    why = build if isinstance(build, Rejection) else None
                if why is not None:
                    return why
        return None

    @staticmethod
    def _asker(name: str, version: Version, extras: frozenset[str]) -> Asker:
        return Asker(kind=AskerKind.PACKAGE, package=name, version=str(version), extras=tuple(sorted(extras)))

    def _in_range(self, name: str, releases: PackageReleases, texts: frozenset[str]) -> int:
        """The recorded releases of `name` inside every range in `texts` and outside the excluded ones, as a bit mask
        over `releases.releases` (bit i: the i-th, oldest first).

        Merged ranges recur thousands of times while the resolver backtracks: each set of range
        texts is answered once per search, from each text's mask, kept with the snapshot (the
        matrix records no pre-releases, so the pre-release flag never changes an answer).
        """
        key = (name, texts)
        found = self._ranges.get(key)
        if found is None:
            found = (1 << len(releases.releases)) - 1
            for text in texts:
                found &= releases.within(text)
            for spec in self.excluded.get(name, ()):
                found &= ~releases.within(str(spec))
            self._ranges[key] = found
        return found

    def releases(self, name: str) -> PackageReleases | None:
        if name not in self._releases:
            self._releases[name] = self.matrix.releases.get(name)
        return self._releases[name]
