"""Renderers for `compat doctor`: a human report (rich) and JSON. Pure: results in, str out."""

from __future__ import annotations

import io
import json

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from compat import __version__
from compat.model import codec
from compat.model.config import Ignore, Waivers
from compat.model.facts import Chosen, Facts
from compat.model.findings import Consequence, Evidence, Finding, Severity, Status
from compat.printable import one_line
from compat.report.essentials import essentials, known

SCHEMA_VERSION = 2
"""Version of doctor's JSON layout. 2: each finding's evidence is a record (kind, text, source, line), not a string."""

_MARK = {Severity.ERROR: ("✗ error", "bold red"), Severity.WARNING: ("! warning", "bold yellow"),
         Severity.INFO: ("i info", "bold blue")}
_HEADING = {Severity.ERROR: "Errors", Severity.WARNING: "Warnings", Severity.INFO: "Info"}


def render_json(
    facts: Facts, findings: tuple[Finding, ...], *, fail_on: Severity = Severity.ERROR, waivers: Waivers | None = None,
) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "compat_version": __version__,
        "facts": codec.encode(facts),
        "findings": [codec.encode(f) for f in findings],
        "summary": {**summary_counts(findings), "strict-counts": strict_counts(findings, fail_on)},
    }
    # Only when a config ignores something, so reports without one keep their shape.
    if waivers is not None and (waivers.ignored or waivers.expired):
        doc["ignored"] = [{"finding": codec.encode(w.finding), "ignore": _ignore_json(w.ignore)} for w in waivers.ignored]
        doc["expired_ignores"] = [_ignore_json(i) for i in waivers.expired]
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _ignore_json(ignore: Ignore) -> dict[str, str | None]:
    return {"id": ignore.id, "reason": ignore.reason, "until": ignore.until.isoformat() if ignore.until else None}


def summary_counts(findings: tuple[Finding, ...]) -> dict[str, int]:
    counts = {s.value: 0 for s in Severity}
    counts["cannot-check"] = 0
    for f in findings:
        counts["cannot-check" if f.status is Status.CANNOT_CHECK else f.severity.value] += 1
    return counts


def evidence_text(evidence: tuple[Evidence, ...]) -> str:
    """A finding's evidence on one line: each fact, with where it was read when the fact does not say."""
    return "; ".join(f"{e.text} ({e.where})" if e.where else e.text for e in evidence)


def strict_counts(findings: tuple[Finding, ...], fail_on: Severity) -> int:
    """Checks that could not run at `fail_on` or worse: what `--strict` adds to the failures."""
    return sum(1 for f in findings if f.status is Status.CANNOT_CHECK and f.severity.rank >= fail_on.rank)


def render_text(
    facts: Facts, findings: tuple[Finding, ...], *, color: bool = False, width: int = 100,
    fail_on: Severity = Severity.ERROR,
) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False)
    console.print(Text(judged_line(facts), style="bold"), soft_wrap=True)  # one line, for grep and logs
    grid = Table.grid(padding=(0, 2))  # the environment header: one home, compat.report.essentials
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for label, value in essentials(facts):
        _add_row(grid, label, value)
    console.print(grid)
    found = [f for f in findings if f.status is Status.FOUND]
    undecided = [f for f in findings if f.status is Status.CANNOT_CHECK]
    for severity in Severity:
        group = [f for f in found if f.severity is severity]
        if not group:
            continue
        console.print()
        console.print(Text(f"{_HEADING[severity]} ({len(group)})", style="bold"))
        for finding in group:
            console.print()
            console.print(_finding(finding))
    if undecided:
        console.print()
        console.print(Text(f"Cannot check ({len(undecided)})", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column()
        for f in undecided:
            line = Text(one_line(f"{f.title} [{f.id}]: "))
            line.append(one_line("; ".join(f.unknown)), style="dim")
            _add_row(grid, "  ?", line)
        console.print(grid)
    console.print()
    console.print(_summary(findings, fail_on))
    # rich pads grid cells to the console width; trailing blanks are noise in logs and diffs.
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


_WHY = {
    Chosen.OPTION: "named with --python",
    Chosen.VIRTUAL_ENV: "the activated virtual environment, $VIRTUAL_ENV",
    Chosen.CONDA: "the activated conda environment, $CONDA_PREFIX",
    Chosen.PATH: "the python on PATH: compat runs from its own isolated install",
    Chosen.OWN: "the interpreter running compat: no environment is activated",
}


def judged_line(facts: Facts) -> str:
    """The report's first line: which interpreter was judged, and why that one."""
    chosen = facts.python.chosen
    why = _WHY[chosen] if chosen is not None else "as recorded in the facts"
    return one_line(f"Judging {known(facts.python.executable)} ({why})")


_EFFECT = {
    Consequence.BROKEN_BUILD: "broken build",
    Consequence.WONT_START: "won't start",
    Consequence.FAILS_LATER: "fails later",
    Consequence.RISK: "risk",
}


def _finding(f: Finding) -> Group:
    label, style = _MARK[f.severity]
    head = Text()
    head.append(label, style=style)
    if f.consequence is not None:
        head.append(f" · {_EFFECT[f.consequence]}", style=style)
    head.append("  ")
    head.append(one_line(f.title), style="bold")
    head.append(f"  [{f.id}]", style="dim")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column()
    if f.cause:
        _add_row(grid, "    why", f.cause)
    if f.evidence:
        _add_row(grid, "    seen", evidence_text(f.evidence))
    fix = " ".join(part for part in (" ".join(f.fix.requires) and f"requires {', '.join(f.fix.requires)}.", f.fix.advice) if part)
    if fix:
        _add_row(grid, Text("    fix", style="green"), fix)
    for command in f.fix.commands:
        _add_row(grid, "    run", command)
    if f.refs:
        _add_row(grid, "    refs", ", ".join(f.refs))
    if f.see:
        _add_row(grid, "    ends in", ", ".join(f.see) + " (catalog entries for the error it prints)")
    return Group(head, grid)


def _add_row(grid: Table, *cells: str | Text) -> None:
    # A str cell would be read as rich markup: `trl[vllm]` or a path with `[...]` from the data would
    # vanish or raise. Data is plain text.
    # One line per cell value: a line break from an input must not start a line of its own.
    grid.add_row(*(Text(one_line(c)) if isinstance(c, str) else c for c in cells))


def _summary(findings: tuple[Finding, ...], fail_on: Severity) -> Text:
    c = summary_counts(findings)
    text = Text()
    if not any(c[s.value] for s in Severity):
        text.append("No problems found.", style="bold green")
    else:
        plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
        text.append(f"{plural(c['error'], 'error')}, {plural(c['warning'], 'warning')}, {c['info']} info", style="bold")
    if c["cannot-check"]:
        strict = strict_counts(findings, fail_on)
        text.append(f"; {c['cannot-check']} check(s) could not run (see above); "
                    f"--strict counts {strict} of them as failures ({fail_on.value} or worse).")
    return text
