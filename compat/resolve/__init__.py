"""From targets and hardware to a pinned set (a Lock), and from an installed environment to it (a Plan).

The stages, one module each: `target` (interpreter and platform), `hardware` (GPUs and driver),
`filters` (which releases fit, and a Rejection for each that does not), `provider` (the resolvelib
model), `catalog` (the search that keeps the set off known failures), `conflicts` (why no set
exists, as ConflictCause records) and `build` (the Lock, with a PinReason for each pin).
"""

from __future__ import annotations

import dataclasses
import difflib
import time
from collections.abc import Mapping, Sequence

from packaging.version import Version

from compat.errors import ResolutionError, UsageError
from compat.judge.torch_build import TorchBuildChoice
from compat.matrix import Matrix
from compat.matrix.extensions import ExtensionTable
from compat.model.conflict import ConflictCause, ConflictKind
from compat.model.facts import Facts
from compat.model.lock import Lock, LockNote, LockNoteKind
from compat.model.unknown import Unknown
from compat.resolve.build import FLOATING, build_lock
from compat.resolve.catalog import (
    Conflict,
    Search,
    SearchBound,
    SearchClock,
    SearchStopped,
    State,
    search,
    still_matching,
)
from compat.resolve.conflicts import explain_conflict
from compat.resolve.filters import Filters
from compat.resolve.hardware import TargetHardware, lock_hardware, require_hardware, target_hardware
from compat.resolve.provider import Candidate, Need, is_exact
from compat.resolve.target import Targets, declared_target, parse_targets, read_targets, target_facts

__all__ = [
    "SearchBound",
    "TargetHardware",
    "Targets",
    "check_targets",
    "declared_target",
    "lock_hardware",
    "parse_targets",
    "read_targets",
    "require_hardware",
    "resolve",
    "resolve_from_installed",
    "target_facts",
]


def _anchors(needs: Sequence[Need]) -> dict[str, Version]:
    """Targets pinned to one release ("trl==0.15.1"): the others are chosen to go with them."""
    out: dict[str, Version] = {}
    for need in needs:
        if len(need.exact_versions) == 1:
            out[need.name] = next(iter(need.exact_versions))
    return out


def check_targets(targets: Sequence[str] | Targets, matrix: Matrix) -> None:
    """Raise UsageError for a target the snapshot does not know: a lock would pass it on unchecked (or a typo)."""
    known = set(matrix.releases.packages()) | FLOATING
    for need in (targets.needs if isinstance(targets, Targets) else parse_targets(targets)):
        if need.name in known:
            continue
        close = difflib.get_close_matches(need.name, sorted(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(
            f"unknown target {need.name!r}{hint}: compat locks the packages the matrix tracks "
            f"({', '.join(sorted(known))}); install others beside the lock, or lock them with --full"
        )


def resolve(
    targets: Sequence[str] | Targets,
    facts: Facts,
    matrix: Matrix,
    *,
    prefer_installed: bool = False,
    minor_compat: bool = False,
    extensions: ExtensionTable | None = None,
    exclude_newer: str | None = None,
    bound: SearchBound | None = None,
    attempt: str = "the targets as given",
    avoid_risks: bool = True,
    hardware: TargetHardware | None = None,
) -> Lock:
    """The newest set that meets `targets` on the target in `facts`; raises ResolutionError when there is none.

    `facts` is the target: its python markers (see `target_facts`), hardware and launch. With
    `prefer_installed`, the installed version of each package is tried first. A search that reaches `bound`
    raises ResolutionError with one TOO_DEEP cause naming `attempt`: it stopped, it did not prove there is no set.
    `targets` and `hardware` already read (`read_targets`, `lock_hardware`) are not read again.
    """
    asked = targets if isinstance(targets, Targets) else read_targets(targets)
    needs = asked.needs
    extensions = extensions if extensions is not None else matrix.extensions
    hw = hardware if hardware is not None else target_hardware(facts, matrix)
    source_builds = frozenset(n.name for n in needs if extensions.find(n.name) is not None and is_exact(n.specifier))
    filters = Filters(facts, matrix, extensions, hw, minor_compat, exclude_newer, source_builds)
    preferred: dict[str, Version] = {}
    if prefer_installed and not isinstance(facts.packages, Unknown):
        for dist in facts.packages:
            try:
                preferred[dist.name] = Version(Version(dist.version).public)
            except ValueError:
                continue
    context = Search(needs=needs, facts=facts, matrix=matrix, filters=filters, extensions=extensions,
                     preferred=preferred, user=frozenset(n.name for n in needs), anchors=_anchors(needs),
                     clock=SearchClock(bound or SearchBound()), avoid_risks=avoid_risks)
    try:
        found = search(State(constraints={}, excluded={}, imposed=(), tried=frozenset()), context)
    except Conflict as conflict:
        raise ResolutionError(explain_conflict(conflict.causes, conflict.provider, conflict.imposed)) from None
    except SearchStopped as stopped:
        raise ResolutionError((ConflictCause(kind=ConflictKind.TOO_DEEP, seconds=stopped.clock.bound.seconds,
                                             backtracked=stopped.clock.busiest(), attempts=(attempt,)),)) from None
    lock = build_lock(asked.asked, facts, matrix, hw, found.mapping, found.criteria, found.imposed, extensions,
                      source_builds=source_builds)
    held = _held_back(found.mapping, filters, extensions, source_builds, matrix)
    if held:
        lock = dataclasses.replace(lock, notes=lock.notes + held)
    left = still_matching(found.mapping, facts, matrix)
    if left:
        lock = dataclasses.replace(lock, notes=lock.notes + left)
    return lock


def _held_back(mapping: Mapping[str, Candidate], filters: Filters, extensions: ExtensionTable, source_builds: frozenset[str],
               matrix: Matrix) -> tuple[LockNote, ...]:
    """A note for each extension whose prebuilt wheels stop at the chosen torch while a newer torch fits the target:
    the set may be older than it needs to be because of that one package, and the lock says so."""
    torch = mapping.get("torch")
    releases = matrix.releases.get("torch")
    if torch is None or torch.version is None or releases is None:
        return ()
    fitting = [r.version for r in releases.releases
               if not r.yanked and not r.version.is_prerelease and r.version > torch.version
               and filters.release_fits("torch", r) is None
               and isinstance(filters.torch_build(r.version), TorchBuildChoice)]
    if not fitting:
        return ()
    newest = max(fitting)
    notes = []
    for cand in mapping.values():
        ext = extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras or cand.name in source_builds:
            continue
        row = ext.release(cand.version)
        # Held back only at the wheels' ceiling: a newer torch they cover that fits (a plan keeping the installed
        # torch) means something else chose this torch.
        if row is None or any(row.torch.contains(v, prereleases=True) for v in fitting):
            continue
        notes.append(LockNote(
            kind=LockNoteKind.HELD_BACK, package=cand.name, version=str(cand.version),
            reason=(f"{cand.name} {cand.version}'s prebuilt wheels cover torch {row.torch} ({row.source}), so torch stays at"
                    f" {torch.version} although torch {newest} fits this target; for a newer torch pin {cand.name}=={cand.version}"
                    " beside it (pip builds it from source) or install a wheel another publisher built for that torch"),
        ))
    return tuple(notes)


def resolve_from_installed(
    targets: Sequence[str] | Targets,
    fixes: Sequence[str],
    facts: Facts,
    matrix: Matrix,
    *,
    latest: bool = False,
    minor_compat: bool = False,
    bound: SearchBound | None = None,
) -> Lock:
    """The set a plan moves an installed environment to, tried in the order that moves least:

    1. the installed targets with doctor's fixes, installed versions first (unless `latest`);
    2. the same, newest versions first (the installed ones can send the search into a corner);
    3. the installed targets alone, newest first: the plain lock, which exists whenever the targets lock.

    They share `bound`. A proven conflict of the first attempt is the answer when every attempt fails (it names
    what the user asked for); a search that stopped says which attempts it made.
    """
    bound = bound or SearchBound()
    attempts: list[tuple[Targets, bool, str]] = []
    # Each target, each fix and the hardware are read once, whatever the number of attempts.
    given = targets if isinstance(targets, Targets) else read_targets(targets)
    added = [f for f in fixes if f not in given.asked]
    wanted = given.plus(read_targets(added)) if added else given
    hw = target_hardware(facts, matrix)
    if not latest:
        attempts.append((wanted, True, "the installed targets with doctor's fixes, installed versions first"))
    attempts.append((wanted, False, "the installed targets with doctor's fixes, newest versions first"))
    if added:
        attempts.append((given, False, "the installed targets alone, newest versions first"))
    deadline = time.monotonic() + bound.seconds
    proven: ResolutionError | None = None
    tried: list[str] = []
    for i, (asked, installed_first, label) in enumerate(attempts):
        # Each attempt gets an equal share of what is left, so a hard first attempt leaves time for the others.
        share = max(deadline - time.monotonic(), 0.0) / (len(attempts) - i)
        try:
            return resolve(asked, facts, matrix, prefer_installed=installed_first, minor_compat=minor_compat,
                           bound=dataclasses.replace(bound, seconds=share), attempt=label, avoid_risks=False, hardware=hw)
        except ResolutionError as exc:
            tried.append(label)
            if proven is None and not _stopped(exc):
                proven = exc
    if proven is not None:
        raise proven
    raise ResolutionError((ConflictCause(kind=ConflictKind.TOO_DEEP, seconds=bound.seconds, attempts=tuple(tried)),))


def _stopped(error: ResolutionError) -> bool:
    return any(c.kind is ConflictKind.TOO_DEEP for c in error.causes)
