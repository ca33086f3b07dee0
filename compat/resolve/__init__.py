"""From targets and hardware to a pinned set (a Lock), and from an installed environment to it (a Plan).

The stages, one module each: `target` (interpreter and platform), `hardware` (GPUs and driver),
`filters` (which releases fit, and a Rejection for each that does not), `provider` (the resolvelib
model), `catalog` (the search that keeps the set off known failures), `conflicts` (why no set
exists, as ConflictCause records) and `build` (the Lock, with a PinReason for each pin).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence

from packaging.version import Version

from compat.errors import ResolutionError, UsageError
from compat.matrix import Matrix
from compat.matrix.extensions import ExtensionTable
from compat.model.facts import Facts
from compat.model.lock import Lock
from compat.model.unknown import Unknown
from compat.resolve.build import FLOATING, build_lock
from compat.resolve.catalog import Conflict, Search, State, search, still_matching
from compat.resolve.conflicts import explain_conflict
from compat.resolve.filters import Filters
from compat.resolve.hardware import require_hardware, target_hardware
from compat.resolve.provider import Need
from compat.resolve.target import declared_target, parse_targets, target_facts

__all__ = ["check_targets", "declared_target", "parse_targets", "require_hardware", "resolve", "target_facts"]


def _anchors(needs: Sequence[Need]) -> dict[str, Version]:
    """Targets pinned to one release ("trl==0.15.1"): the others are chosen to go with them."""
    out: dict[str, Version] = {}
    for need in needs:
        if len(need.exact_versions) == 1:
            out[need.name] = next(iter(need.exact_versions))
    return out


def check_targets(targets: Sequence[str], matrix: Matrix) -> None:
    """Raise UsageError for a target the snapshot does not know: a lock would pass it on unchecked (or a typo)."""
    known = set(matrix.releases.packages()) | FLOATING
    for need in parse_targets(targets):
        if need.name in known:
            continue
        close = difflib.get_close_matches(need.name, sorted(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(
            f"unknown target {need.name!r}{hint}: compat locks the packages the matrix tracks "
            f"({', '.join(sorted(known))}); install others beside the lock, or lock them with --full"
        )


def resolve(
    targets: Sequence[str],
    facts: Facts,
    matrix: Matrix,
    *,
    prefer_installed: bool = False,
    minor_compat: bool = False,
    extensions: ExtensionTable | None = None,
    exclude_newer: str | None = None,
) -> Lock:
    """The newest set that meets `targets` on the target in `facts`; raises ResolutionError when there is none.

    `facts` is the target: its python markers (see `target_facts`), hardware and launch. With
    `prefer_installed`, the installed version of each package is tried first.
    """
    needs = parse_targets(targets)
    extensions = extensions if extensions is not None else matrix.extensions
    hw = target_hardware(facts, matrix)
    filters = Filters(facts, matrix, extensions, hw, minor_compat, exclude_newer)
    preferred: dict[str, Version] = {}
    if prefer_installed and not isinstance(facts.packages, Unknown):
        for dist in facts.packages:
            try:
                preferred[dist.name] = Version(Version(dist.version).public)
            except ValueError:
                continue
    context = Search(needs=needs, facts=facts, matrix=matrix, filters=filters, extensions=extensions,
                     preferred=preferred, user=frozenset(n.name for n in needs), anchors=_anchors(needs))
    try:
        found = search(State(constraints={}, excluded={}, imposed=(), tried=frozenset()), context)
    except Conflict as conflict:
        raise ResolutionError(explain_conflict(conflict.causes, conflict.provider, conflict.imposed)) from None
    lock = build_lock(targets, facts, matrix, hw, found.mapping, found.criteria, found.imposed, extensions)
    left = still_matching(found.mapping, facts, matrix)
    if left:
        lock = dataclasses.replace(lock, notes=lock.notes + left)
    return lock
