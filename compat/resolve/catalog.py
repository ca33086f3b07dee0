"""The catalog keeps a lock off known failures.

After each resolution the result is laid over the target facts and every signature with a version
fix is evaluated; a match becomes a constraint (its fix, or leaving one of its package ranges) and
the set is resolved again, so the answer never lands on a known-bad combination. Each way out is a
branch of the search; the first that resolves wins.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from resolvelib import BaseReporter

from compat.errors import ResolutionError
from compat.judge.conditions import Verdict, evaluate
from compat.judge.diagnose import vetoes
from compat.matrix import Matrix
from compat.matrix.extensions import ExtensionTable
from compat.matrix.releases import PackageReleases
from compat.matrix.signatures import Signature
from compat.matrix.when import ScriptWhen, When
from compat.model.asker import Asker, AskerKind
from compat.model.conflict import ConflictCause, ConflictKind, Shortfall
from compat.model.facts import Distribution, Facts, TorchBuild, TorchSource
from compat.model.findings import Severity
from compat.model.lock import Constraint, ConstraintKind, LockNote, LockNoteKind
from compat.model.rejection import Rejection, RejectionKind
from compat.model.unknown import Unknown
from compat.resolve.filters import Filters
from compat.resolve.links import links_for
from compat.resolve.provider import Candidate, Need, Provider, is_exact
from compat.timeline.records import BrokenLink

Resolved = Mapping[str, Candidate]


@dataclass(frozen=True, kw_only=True)
class State:
    """What the catalog (and the extension table) has imposed so far on one branch of the search."""

    constraints: Mapping[str, tuple[Need, ...]]
    """Requirements added per package."""
    excluded: Mapping[str, tuple[SpecifierSet, ...]]
    """Ranges taken out per package."""
    imposed: tuple[Constraint, ...]
    """The catalog constraints behind them, in order."""
    tried: frozenset[str]
    """Signatures already worked around on this branch."""


DEFAULT_SEARCH_SECONDS = 20.0
"""How long one search may run. Every target of bench/lock_bench.py locks in under 5 s; a search still running
after four times that is backtracking through combinations that will not decide it."""


@dataclass(frozen=True, kw_only=True)
class SearchBound:
    """How long a search may run before it stops and says so (which is not proof that no set exists)."""

    seconds: float = DEFAULT_SEARCH_SECONDS
    """Wall-clock seconds for the whole search, every branch of it."""
    rounds: int = 20000
    """resolvelib rounds over all branches: a bound that holds however fast the machine is."""
    progress: Callable[[int, float], None] | None = None
    """Called now and then with the rounds and seconds so far (the CLI shows a line past one second)."""


class SearchStopped(Exception):
    """The search reached its bound before it decided (internal: `resolve` turns it into its outcome)."""

    def __init__(self, clock: SearchClock) -> None:
        super().__init__("search stopped at its bound")
        self.clock = clock


class SearchClock:
    """The running count of one search against its bound, and which packages it backtracked on."""

    def __init__(self, bound: SearchBound) -> None:
        self.bound = bound
        self.started = time.monotonic()
        self.rounds = 0
        self.backtracked: Counter[str] = Counter()

    def tick(self) -> None:
        self.rounds += 1
        elapsed = time.monotonic() - self.started
        if elapsed > self.bound.seconds or self.rounds > self.bound.rounds:
            raise SearchStopped(self)
        if self.bound.progress is not None:
            self.bound.progress(self.rounds, elapsed)

    def busiest(self, n: int = 3) -> tuple[str, ...]:
        """The packages the search backtracked on most, most first (ties by name)."""
        return tuple(name for name, _ in sorted(self.backtracked.items(), key=lambda kv: (-kv[1], kv[0]))[:n])


@dataclass(frozen=True, kw_only=True)
class Search:
    """What stays the same across the branches of one search."""

    needs: tuple[Need, ...]
    facts: Facts
    matrix: Matrix
    filters: Filters
    extensions: ExtensionTable
    preferred: Mapping[str, Version]
    user: frozenset[str]
    anchors: Mapping[str, Version] = dataclasses.field(default_factory=dict)
    """The targets pinned to one release: what "tested together" and "contemporaneous" are judged against."""
    clock: SearchClock = dataclasses.field(default_factory=lambda: SearchClock(SearchBound()))
    """The bound of the whole search, shared by its branches."""
    avoid_risks: bool = True
    """Keep off what doctor calls a warning too, where a way out resolves (a lock); a plan moves only for errors."""


@dataclass(frozen=True, kw_only=True)
class Found:
    mapping: Resolved
    criteria: Mapping[str, Any]
    imposed: tuple[Constraint, ...]


class Conflict(Exception):
    """No set on one branch of the search; explained (which is slow) only if every branch fails."""

    def __init__(self, causes: Sequence[Any], provider: Provider, imposed: tuple[Constraint, ...]) -> None:
        super().__init__("no compatible set")
        self.causes, self.provider, self.imposed = causes, provider, imposed


def search(state: State, s: Search) -> Found:
    """Resolve; when the result hits a known failure, try each way out of it in turn (its fix first)."""
    provider = Provider(s.matrix, s.filters, state.constraints, state.excluded, s.preferred, s.user, s.anchors)
    # A required fix is a requirement, not only a bound: it brings in a package the set lacks (accelerate).
    required = tuple(n for name in sorted(state.constraints) for n in state.constraints[name])
    mapping, criteria = _run(provider, (*s.needs, *required), state.imposed, s.clock)
    wrong_cuda = _extension_cuda_mismatch(mapping, s.extensions, s.filters.source_builds, s.filters.python)
    if wrong_cuda is not None:
        name, version = wrong_cuda.package, wrong_cuda.version
        s.filters.rejected[(name, version)] = wrong_cuda
        excluded = {**state.excluded, name: state.excluded.get(name, ()) + (SpecifierSet(f"=={version}"),)}
        return search(dataclasses.replace(state, excluded=excluded), s)
    broken = links_for(getattr(s.matrix, "roots", None)).set_breaks(
        {c.name: str(c.version) for ident, c in mapping.items() if "[" not in ident and c.version is not None})
    if broken is not None:
        return _around_link(broken, state, s)
    hit = _known_failure(mapping, s.facts, s.matrix, state.tried, s.avoid_risks)
    if hit is None:
        return Found(mapping=mapping, criteria=criteria, imposed=state.imposed)
    sig, verdict = hit
    first_error: Exception | None = None
    for option in _ways_out(sig, verdict, s.needs, s.matrix, state):
        try:
            return search(option, s)
        except (Conflict, ResolutionError) as exc:
            first_error = first_error or exc
    if sig.severity is not Severity.ERROR:
        # A risk (doctor's warning) with no way out is no reason to have no set: keep this one, judged on the
        # other entries; the lock's notes say the risk still applies.
        return search(dataclasses.replace(state, tried=state.tried | {sig.id}), s)
    if first_error is None:
        raise ResolutionError((ConflictCause(kind=ConflictKind.ALWAYS_KNOWN_FAILURE, signature=sig.id, title=sig.title),))
    raise first_error


def _around_link(link: BrokenLink, state: State, s: Search) -> Found:
    """A set where one package imports, at start-up, a name the other's release lacks (doctor's error), between two
    packages no requirement ties (the provider checks those as it goes): without the importer's release, else without
    the provider's; a release the targets pin exactly is not moved."""
    user = {n.name: n.specifier for n in s.needs}
    rejection = Rejection(kind=RejectionKind.BROKEN_LINK, package=link.provider, version=link.provider_version,
                          asker=Asker(kind=AskerKind.PACKAGE, package=link.importer, version=link.importer_version),
                          imported=link.key)
    first_error: Exception | None = None
    for name, version in ((link.importer, link.importer_version), (link.provider, link.provider_version)):
        if name in user and is_exact(user[name]):
            continue
        s.filters.rejected[(name, version)] = rejection
        excluded = {**state.excluded, name: state.excluded.get(name, ()) + (SpecifierSet(f"=={version}"),)}
        try:
            return search(dataclasses.replace(state, excluded=excluded), s)
        except (Conflict, ResolutionError) as exc:
            first_error = first_error or exc
    if first_error is None:
        raise ResolutionError((ConflictCause(kind=ConflictKind.REQUIREMENTS, package=link.provider,
                                             specifier=f"=={link.provider_version}", shortfall=Shortfall.REJECTED,
                                             rejections=(rejection,)),))
    raise first_error


def still_matching(mapping: Resolved, facts: Facts, matrix: Matrix) -> tuple[LockNote, ...]:
    """Known failures the set still meets: those with a version fix that every way out failed to resolve (a pinned
    target holds the set on them), and those doctor reports as a warning or an error that no version fix clears (the
    hardware makes them true: vLLM's bfloat16 on a V100). The lock states each, so the gate's finding is never news."""
    installed = facts_with(facts, mapping)
    out = []
    for sig in sorted(matrix.signatures, key=lambda s: s.id):
        if not sig.when.packages:
            continue
        if sig.fix.requires:
            matched = evaluate(_exposure(sig.when, facts), installed).matched
        else:  # judged as doctor judges it: a script condition the lock cannot see is not met
            matched = vetoes(sig) and evaluate(sig.when, installed).matched
        if matched:
            out.append(LockNote(kind=LockNoteKind.STILL_MATCHES, signature=sig.id, title=sig.title,
                                advice=sig.fix.advice or None, requires=tuple(sig.fix.requires)))
    return tuple(out)


def _run(provider: Provider, needs: Sequence[Need], imposed: tuple[Constraint, ...],
         clock: SearchClock) -> tuple[Resolved, Mapping[str, Any]]:
    from resolvelib import Resolver
    from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep

    try:
        resolver: Resolver[Need, Candidate, str] = Resolver(provider, _Reporter(clock))
        result = resolver.resolve(needs, max_rounds=clock.bound.rounds)
    except ResolutionImpossible as exc:
        raise Conflict(list(exc.causes), provider, imposed) from exc
    except ResolutionTooDeep as exc:
        raise SearchStopped(clock) from exc
    return result.mapping, result.criteria


class _Reporter(BaseReporter):
    """Counts the rounds against the bound and the backtracks per package."""

    def __init__(self, clock: SearchClock) -> None:
        self.clock = clock

    def starting_round(self, index: int) -> None:
        self.clock.tick()

    def rejecting_candidate(self, criterion: Any, candidate: Candidate) -> None:
        self.clock.backtracked[candidate.name] += 1


def _extension_cuda_mismatch(mapping: Resolved, extensions: ExtensionTable, source_builds: frozenset[str],
                             python: str) -> Rejection | None:
    """An extension with no prebuilt wheel for the chosen torch build: the project's own are per CUDA major,
    another publisher's per exact CUDA (one the targets pin is built from source instead)."""
    torch = mapping.get("torch")
    cuda = torch.variant.cuda if torch is not None and torch.variant is not None else None
    if cuda is None or torch is None or torch.version is None:
        return None
    for cand in mapping.values():
        ext = extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras or cand.name in source_builds:
            continue
        rows = ext.rows(cand.version)
        if rows and ext.wheel_for(cand.version, torch.version, cuda, python) is None:
            built = sorted({c for r in rows if r.torch.contains(torch.version, prereleases=True) for c in r.cuda})
            return Rejection(kind=RejectionKind.EXTENSION_CUDA_MAJOR, package=cand.name, version=str(cand.version),
                             cuda_major=int(cuda.split(".")[0]), variant=torch.variant.label if torch.variant is not None else None,
                             supported=", ".join(built) or None)
    return None


def facts_with(facts: Facts, mapping: Resolved) -> Facts:
    """The target facts with the resolved set installed: what the catalog will see after `pip install`."""
    dists = []
    torch = None
    for ident, cand in mapping.items():
        if "[" in ident or cand.version is None:
            continue
        version = str(cand.version) + (f"+{cand.variant}" if cand.variant and not cand.default_variant else "")
        dists.append(Distribution(name=cand.name, version=version, requires=tuple(str(r) for r in cand.requires)))
        if cand.name == "torch":
            cuda = cand.variant.cuda if cand.variant is not None else None
            torch = TorchBuild(
                version=version,
                cuda=cuda if cand.variant else Unknown(reason="torch build variant not curated"),
                cudnn=Unknown(reason="not installed yet"),
                nccl=Unknown(reason="not installed yet"),
                arch_list=Unknown(reason="not installed yet"),
                cxx11_abi=Unknown(reason="not installed yet"),
                source=TorchSource.DECLARED,
            )
    return dataclasses.replace(facts, packages=tuple(sorted(dists, key=lambda d: d.name)), torch=torch)


def _exposure(when: When, facts: Facts) -> When:
    """The clause as a lock judges it: without a script, the script may do anything the catalog knows."""
    if facts.script is None and not when.script.is_empty():
        return dataclasses.replace(when, script=ScriptWhen())
    return when


def _known_failure(mapping: Resolved, facts: Facts, matrix: Matrix, tried: frozenset[str],
                   avoid_risks: bool) -> tuple[Signature, Verdict] | None:
    installed = facts_with(facts, mapping)
    for sig in sorted(matrix.signatures, key=lambda s: s.id):
        # Only a version fix can be imposed; conditions on packages are what a lock can change.
        if sig.id in tried or not sig.when.packages or not sig.fix.requires or not vetoes(sig, risks=avoid_risks):
            continue
        verdict = evaluate(_exposure(sig.when, facts), installed)
        if verdict.matched:
            return sig, verdict
    return None


def _ways_out(sig: Signature, verdict: Verdict, needs: Sequence[Need], matrix: Matrix, state: State) -> Iterator[State]:
    """States that keep the next resolution off `sig`: its version fix, else leaving one of its package ranges."""
    evidence = tuple(verdict.evidence)
    user = {n.name: n.specifier for n in needs}
    tried = state.tried | {sig.id}
    for text in sig.fix.requires:
        req = Requirement(text)
        name = str(canonicalize_name(req.name))
        if name in user and _disjoint(user[name], req.specifier, matrix.releases.get(name)):
            continue  # the user asked for versions the fix rules out
        need = Need(name=name, extras=frozenset(), specifier=req.specifier, asker=Asker(kind=AskerKind.CATALOG, signature=sig.id))
        imposed = Constraint(kind=ConstraintKind.REQUIRE, package=name, specifier=str(req.specifier), signature=sig.id, evidence=evidence)
        yield dataclasses.replace(
            state,
            constraints={**state.constraints, name: state.constraints.get(name, ()) + (need,)},
            imposed=state.imposed + (imposed,),
            tried=tried,
        )
    for name, spec in sig.when.packages:
        if name in user and is_exact(user[name]):
            continue  # an exact pin cannot move
        left = Constraint(kind=ConstraintKind.EXCLUDE, package=name, specifier=str(spec), signature=sig.id, evidence=evidence)
        yield dataclasses.replace(
            state,
            excluded={**state.excluded, name: state.excluded.get(name, ()) + (spec,)},
            imposed=state.imposed + (left,),
            tried=tried,
        )


def _disjoint(user: SpecifierSet, fix: SpecifierSet, releases: PackageReleases | None) -> bool:
    """Whether no recorded release meets both what the user asked for and the fix."""
    if releases is None:
        return False
    both = user & fix
    return not any(both.contains(r.version, prereleases=True) for r in releases.releases)
