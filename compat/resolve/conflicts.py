"""resolvelib's causes (requirement + parent) as `ConflictCause` records: who asked, why nothing fit, a way out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.model.conflict import (
    Alternative,
    Ask,
    ConflictCause,
    ConflictKind,
    Shortfall,
    Upgrade,
)
from compat.model.lock import Constraint
from compat.model.rejection import Rejection, RejectionKind, mentions
from compat.resolve.provider import PROBE, Candidate, Need, Provider, is_pin

_ARCH = frozenset({RejectionKind.NO_ARCH, RejectionKind.EXTENSION_MIN_ARCH})
_DRIVER = frozenset({RejectionKind.NEEDS_DRIVER})


def explain_conflict(causes: Sequence[Any], provider: Provider, imposed: Sequence[Constraint]) -> tuple[ConflictCause, ...]:
    """One cause per package in conflict, then the catalog constraints imposed on the way."""
    out: list[ConflictCause] = []
    by_name: dict[str, list[Any]] = {}
    for info in causes:
        by_name.setdefault(info.requirement.name, []).append(info)
    for name in sorted(by_name):
        infos = by_name[name]
        asks = [_ask(info.requirement, info.parent) for info in infos]
        asks += [_ask(need, None) for need in provider.constraints.get(name, ())]
        shortfall, spec, rejections = _why_none(name, infos, provider)
        upgrades = _upgrades(name, infos, provider)
        alternative = Alternative.NONE
        if upgrades:
            rejected = list(provider.filters.rejected.values())
            if any(mentions(r, _ARCH) for r in rejected):
                alternative = Alternative.ANOTHER_GPU
            elif any(mentions(r, _DRIVER) for r in rejected):
                alternative = Alternative.NEWER_DRIVER
        out.append(ConflictCause(
            kind=ConflictKind.REQUIREMENTS, package=name, asks=tuple(asks), shortfall=shortfall, specifier=spec,
            rejections=rejections, upgrades=upgrades, alternative=alternative,
        ))
    out += [ConflictCause(kind=ConflictKind.IMPOSED, constraint=c) for c in imposed]
    return tuple(dict.fromkeys(out))


def _ask(need: Need, parent: Candidate | None) -> Ask:
    asker = parent.asker() if parent is not None else need.asker
    return Ask(asker=asker, package=need.name, extras=tuple(sorted(need.extras)), specifier=str(need.specifier),
               exact=is_pin(need.specifier))


def _why_none(name: str, infos: Sequence[Any], provider: Provider) -> tuple[Shortfall, str, tuple[Rejection, ...]]:
    """Why the releases the requirements ask for were all dropped (or that they contradict each other)."""
    releases = provider.releases(name)
    if releases is None:
        return Shortfall.NONE, "", ()
    spec = SpecifierSet()
    for info in infos:
        spec &= info.requirement.specifier
    for s in provider.constraints.get(name, ()):
        spec &= s.specifier
    matching = [r for r in reversed(releases.releases) if spec.contains(r.version, prereleases=True)]
    if not matching:
        wanted = [
            r for r in reversed(releases.releases)
            if any(i.requirement.specifier.contains(r.version, prereleases=True) for i in infos)
        ]
        if len(infos) > 1 and wanted:
            return Shortfall.CONTRADICTORY, "", ()
        return Shortfall.NO_RELEASE, str(spec), ()
    reasons: list[Rejection] = []
    for r in matching:
        why = provider.filters.rejected.get((name, str(r.version)))
        if why is None:
            provider.find_matches(name, {name: iter([i.requirement for i in infos])}, {name: iter(())})
            why = provider.filters.rejected.get((name, str(r.version)))
        if why is not None and why not in reasons:
            reasons.append(why)
    if not reasons:
        return Shortfall.NONE, "", ()
    return Shortfall.REJECTED, "", tuple(reasons)


def _upgrades(name: str, infos: Sequence[Any], provider: Provider) -> tuple[Upgrade, ...]:
    """The oldest release of a parent whose requirement on `name` the target can meet ("use vllm >= 0.9.0")."""
    hints: list[Upgrade] = []
    # A way out must not land on a pair whose top-level imports do not link (compat/resolve/links.py).
    parents = [(i.parent.name, str(i.parent.version)) for i in infos if i.parent is not None and i.parent.version is not None]
    pins = [s.version for i in infos for s in i.requirement.specifier if s.operator == "==" and "*" not in s.version]
    for info in infos:
        parent = info.parent
        if parent is None:
            newer = _newer_viable(name, info.requirement, provider, parents)
            if newer is not None:
                hints.append(Upgrade(package=name, version=str(newer)))
            continue
        if parent.version is None:
            continue
        releases = provider.releases(parent.name)
        if releases is None:
            continue
        for r in releases.releases:
            if r.version <= parent.version or not isinstance(r.requires, tuple) or r.yanked:
                continue
            if provider.filters.release_fits(parent.name, r) is not None:
                continue
            if any(provider.links.broken(parent.name, str(r.version), name, pin) is not None for pin in pins):
                continue
            reqs = [q for q in r.requires if canonicalize_name(q.name) == name and provider.filters.markers_hold(q, parent.extras)]
            if reqs and _has_fitting(name, reqs, provider):
                hints.append(Upgrade(package=parent.name, version=str(r.version)))
                break
    return tuple(dict.fromkeys(hints))


def _newer_viable(name: str, need: Need, provider: Provider, parents: Sequence[tuple[str, str]] = ()) -> Version | None:
    """The oldest release newer than every version `need` allows that fits the target (a target's way out)
    and links with the `parents` (name, version) that require it."""
    releases = provider.releases(name)
    if releases is None:
        return None
    asked = [r.version for r in releases.releases if need.specifier.contains(r.version, prereleases=True)]
    if not asked:
        return None
    anything = Need(name=name, extras=frozenset(), specifier=SpecifierSet(), asker=PROBE)
    found = provider.find_matches(name, {name: iter([anything])}, {name: iter(())})
    newer = [c.version for c in found if c.version is not None and c.version > max(asked)
             and all(provider.links.broken(p, pv, name, str(c.version)) is None for p, pv in parents)]
    return min(newer) if newer else None


def _has_fitting(name: str, reqs: Sequence[Any], provider: Provider) -> bool:
    spec = SpecifierSet()
    for q in reqs:
        spec &= q.specifier
    found = provider.find_matches(name, {name: iter([Need(name=name, extras=frozenset(), specifier=spec, asker=PROBE)])}, {name: iter(())})
    return bool(found)

