"""The lines the text report adds after its summary: ignores and --strict. Pure: records in, str out."""

from __future__ import annotations

from compat.model.config import Ignored, Waivers
from compat.model.findings import Finding, Severity, Status
from compat.printable import one_line
from compat.report.links import render_pages


def render_notes(
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
    config: str | None = None,
    report_url: str | None = None,
) -> str:
    """"" when there is nothing to add; else one line per ignored finding, expired ignore and strict failure."""
    waivers = waivers or Waivers()
    lines = []
    groups: dict[str, list[Ignored]] = {}
    for w in waivers.ignored:
        groups.setdefault(w.finding.id, []).append(w)
    for fid, same in groups.items():
        ignore = same[0].ignore
        until = f" until {ignore.until.isoformat()}" if ignore.until else ""
        times = f" ×{len(same)}" if len(same) > 1 else ""
        worst = max((w.finding.severity for w in same), key=lambda s: s.rank)
        lines.append(f"ignored{until}: {fid}{times} ({worst.value}): {one_line(ignore.reason)}")
    for i in waivers.expired:
        assert i.until is not None
        lines.append(f"expired ignore: {i.id} was ignored until {i.until.isoformat()} ({one_line(i.reason)}); "
                     "it counts again and fails the run")
    for i in waivers.stale:
        lines.append(f"unused ignore: {i.id} was not reported; remove it from {config or 'the config'}")
    undecided = [f.id for f in findings if f.status is Status.CANNOT_CHECK and f.severity.rank >= fail_on.rank]
    if strict and undecided:
        lines.append(
            f"--strict: exit 1 because {len(undecided)} check(s) at {fail_on.value} or worse could not run: {', '.join(undecided)}"
        )
    return "".join(line + "\n" for line in lines) + render_pages([f.id for f in findings], report_url)
