"""The ignore list: which findings a project has accepted, and which acceptances have run out."""

from __future__ import annotations

from datetime import date

from compat.model.config import Ignore, Ignored, Waivers
from compat.model.findings import Finding, Severity, Status


def apply_ignores(findings: tuple[Finding, ...], ignores: tuple[Ignore, ...], today: date) -> tuple[tuple[Finding, ...], Waivers]:
    """The findings that still count, and what the ignore list did.

    A live entry takes its finding out of the verdict; an expired one leaves it in (and `fails_waivers`
    fails the run), so an acceptance with a date is revisited on that date and not forgotten.
    """
    live = {i.id: i for i in ignores if not i.expired(today)}
    reported = {f.id for f in findings}
    kept: list[Finding] = []
    ignored: list[Ignored] = []
    for f in findings:
        entry = live.get(f.id)
        if entry is None:
            kept.append(f)
        else:
            ignored.append(Ignored(finding=f, ignore=entry))
    found = {f.id for f in findings if f.status is Status.FOUND}
    expired = tuple(i for i in ignores if i.expired(today) and i.id in found)
    stale = tuple(i for i in ignores if i.id not in reported)
    return tuple(kept), Waivers(ignored=tuple(ignored), expired=expired, stale=stale)


def fails_waivers(waivers: Waivers) -> bool:
    """An expired ignore whose finding is still there fails the run, whatever its severity."""
    return bool(waivers.expired)


def undecided(findings: tuple[Finding, ...], threshold: Severity) -> tuple[Finding, ...]:
    """The checks at or above `threshold` that could not run: what `--strict` fails on."""
    return tuple(f for f in findings if f.status is Status.CANNOT_CHECK and f.severity.rank >= threshold.rank)
