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
from typing import Any

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
    explain_held: bool = True,
) -> Lock:
    """The newest set that meets `targets` on the target in `facts`; raises ResolutionError when there is none.

    `facts` is the target: its python markers (see `target_facts`), hardware and launch. With
    `prefer_installed`, the installed version of each package is tried first. A search that reaches `bound`
    raises ResolutionError with one TOO_DEEP cause naming `attempt`: it stopped, it did not prove there is no set.
    `targets` and `hardware` already read (`read_targets`, `lock_hardware`) are not read again.
    With `explain_held`, a target that keeps torch older than the targets without it would take gets a note.
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
    # A torch the user pinned exactly is their choice: no package holds it back.
    torch_pinned = any(n.name == "torch" and is_exact(n.specifier) for n in needs)
    held = () if torch_pinned else _held_back(found.mapping, filters, extensions, source_builds, matrix)
    options = {"facts": facts, "matrix": matrix, "minor_compat": minor_compat, "extensions": extensions,
               "exclude_newer": exclude_newer, "avoid_risks": avoid_risks}
    if held and explain_held:
        held = _confirmed(held, asked.asked, needs, found.mapping, options)
    if not held and not torch_pinned and explain_held:
        held = _held_back_by_target(asked.asked, needs, found.mapping, filters, matrix, options)
    if held:
        lock = dataclasses.replace(lock, notes=lock.notes + held)
    left = still_matching(found.mapping, facts, matrix)
    if left:
        lock = dataclasses.replace(lock, notes=lock.notes + left)
    return lock


# Each look at the set without one target is a search of its own: it may only say more, never delay the lock much.
# Hence two or three targets only (a four-target unpinned stack costs seconds a try), and a bound in rounds, which
# keeps the note the same on a slow machine; the seconds are only a backstop.
_WITHOUT_BOUND = SearchBound(seconds=10.0, rounds=400)
_WITHOUT_MAX_TARGETS = 3


def _held_back_by_target(targets: Sequence[str], needs: Sequence[Need], mapping: Mapping[str, Candidate], filters: Filters,
                         matrix: Matrix, options: dict[str, Any]) -> tuple[LockNote, ...]:
    """A note for the target that keeps torch older than the other targets take on their own: without it the set is
    resolved again, and a newer torch there means it held the stack back (flashinfer-cubin, whose newest release
    pins an older flashinfer-python, and so an older vLLM and torch). Exact pins are the user's choice and are not
    tried; nor is anything tried when torch is already the newest release that fits the machine."""
    torch = mapping.get("torch")
    if torch is None or torch.version is None or not 2 <= len(needs) <= _WITHOUT_MAX_TARGETS or len(needs) != len(targets):
        return ()
    if _newest_fitting_torch(torch.version, filters, matrix) is None:
        return ()
    for need, text in zip(needs, targets, strict=True):
        if need.name == "torch" or is_exact(need.specifier):
            continue
        try:
            other = resolve([t for t in targets if t != text], **options, bound=_WITHOUT_BOUND, explain_held=False)
        except ResolutionError:
            continue
        freed = other.pin("torch")
        if freed is None or Version(freed.version) <= torch.version:
            continue
        # Held back means the other targets move up without it; a target that merely pins torch (vLLM) moves nobody.
        moved = [(p.name, mine.version, p.version) for p in other.pins
                 if p.name != "torch" and any(n.name == p.name for n in needs)
                 and (mine := mapping.get(p.name)) is not None and mine.version is not None
                 and Version(p.version) > mine.version]
        if not moved:
            continue
        held = mapping.get(need.name)
        version = str(held.version) if held is not None and held.version is not None else None
        return (LockNote(
            kind=LockNoteKind.HELD_BACK, package=need.name, version=version,
            reason=(f"{need.name}{' ' + version if version else ''} holds the set back: with it "
                    f"{', '.join(f'{n} {old}' for n, old, _ in moved)} and torch {torch.version}, without it "
                    f"{', '.join(f'{n} {new}' for n, _, new in moved)} and torch {freed.version}; for the newer stack drop"
                    f" {need.name} or wait for a release of it that fits one"),
        ),)
    return ()


def _confirmed(held: tuple[LockNote, ...], targets: Sequence[str], needs: Sequence[Need], mapping: Mapping[str, Candidate],
               options: dict[str, Any]) -> tuple[LockNote, ...]:
    """The extension notes that hold: with two or three targets, the set without that extension is resolved again, and
    a torch no newer there means something else (vLLM's builds for this driver) stopped torch, not its wheels."""
    torch = mapping.get("torch")
    if torch is None or torch.version is None or not 2 <= len(needs) <= _WITHOUT_MAX_TARGETS or len(needs) != len(targets):
        return held
    out = []
    for note in held:
        text = next((t for n, t in zip(needs, targets, strict=True) if n.name == note.package), None)
        if text is not None:
            try:
                other = resolve([t for t in targets if t != text], **options, bound=_WITHOUT_BOUND, explain_held=False)
            except ResolutionError:
                other = None
            freed = other.pin("torch") if other is not None else None
            if freed is not None and Version(freed.version) <= torch.version:
                continue
        out.append(note)
    return tuple(out)


def _newest_fitting_torch(chosen: Version, filters: Filters, matrix: Matrix) -> Version | None:
    """The newest torch release newer than `chosen` that fits the target (Python, GPUs, driver); None when none."""
    releases = matrix.releases.get("torch")
    if releases is None:
        return None
    fitting = [r.version for r in releases.releases
               if not r.yanked and not r.version.is_prerelease and r.version > chosen
               and filters.release_fits("torch", r) is None
               and isinstance(filters.torch_build(r.version), TorchBuildChoice)]
    return max(fitting, default=None)


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
        rows = ext.rows(cand.version)
        # Held back only at the wheels' ceiling: a newer torch they cover that fits (a plan keeping the installed
        # torch) means something else chose this torch.
        if not rows or any(r.torch.contains(v, prereleases=True) for r in rows for v in fitting):
            continue
        by_publisher: dict[str | None, list[str]] = {}
        for r in rows:
            by_publisher.setdefault(r.publisher, []).append(str(r.torch))
        covered = "; ".join(
            f"torch {', '.join(dict.fromkeys(specs))} ("
            + (f"another publisher, {who}" if who else "; ".join(r.source for r in rows if r.publisher is None)) + ")"
            for who, specs in by_publisher.items())
        notes.append(LockNote(
            kind=LockNoteKind.HELD_BACK, package=cand.name, version=str(cand.version),
            reason=(f"{cand.name} {cand.version}'s prebuilt wheels cover {covered}, so torch stays at"
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
