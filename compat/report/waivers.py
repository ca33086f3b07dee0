"""The lines the text report adds after its summary: ignores and --strict. Pure: records in, str out."""

from __future__ import annotations

from compat.model.config import Waivers
from compat.model.findings import Finding, Severity, Status


def render_notes(
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
    config: str | None = None,
) -> str:
    """"" when there is nothing to add; else one line per ignored finding, expired ignore and strict failure."""
    waivers = waivers or Waivers()
    lines = []
    for w in waivers.ignored:
        until = f" until {w.ignore.until.isoformat()}" if w.ignore.until else ""
        lines.append(f"ignored{until}: {w.finding.id} ({w.finding.severity.value}): {w.ignore.reason}")
    for i in waivers.expired:
        assert i.until is not None
        lines.append(f"expired ignore: {i.id} was ignored until {i.until.isoformat()} ({i.reason}); it counts again and fails the run")
    for i in waivers.stale:
        lines.append(f"unused ignore: {i.id} was not reported; remove it from {config or 'the config'}")
    undecided = [f.id for f in findings if f.status is Status.CANNOT_CHECK and f.severity.rank >= fail_on.rank]
    if strict and undecided:
        lines.append(
            f"--strict: exit 1 because {len(undecided)} check(s) at {fail_on.value} or worse could not run: {', '.join(undecided)}"
        )
    return "".join(line + "\n" for line in lines)
