"""`compat doctor --format markdown` (`compat report`): a block to paste into a GitHub issue.

One collapsible `<details>` element: the summary line says the verdict and the machine, the body
holds the essentials and each finding with its fix. The whole block stays under `LIMIT`
characters whatever the environment (a GitHub comment holds 65,536): package lists are never
printed, and past the budget findings shrink to one line each.
"""

from __future__ import annotations

import re

from compat import __version__
from compat.model.config import Waivers
from compat.model.facts import Facts
from compat.model.findings import Finding, Severity, Status
from compat.printable import one_line
from compat.report.doctor import evidence_text, summary_counts
from compat.report.essentials import essentials, fix_text, gpu_line, torch_line
from compat.report.links import finding_url

LIMIT = 10_000
"""The most characters the block may take."""
_BUDGET = LIMIT - 1_500
"""Room for full findings; the rest is for the one-line tail and the closing notes."""

_MARK = {Severity.ERROR: "✗ error", Severity.WARNING: "! warning", Severity.INFO: "i info"}


_CODE = re.compile(r"(`[^`]*`)")


def escape(text: str) -> str:
    """Text safe inside the HTML block and a table cell: no tags, no cell breaks.

    Code spans keep `<` and `>` as they are (GitHub shows entities in them literally)."""
    out = []
    # One line: a line break from an input would end the table row or open a block of its own.
    for i, part in enumerate(_CODE.split(one_line(text))):
        if i % 2 == 0:
            part = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        out.append(part.replace("|", "\\|"))
    return "".join(out)


def render_markdown(
    facts: Facts,
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    report_url: str | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
) -> str:
    waivers = waivers or Waivers()
    head = [
        "<details>",
        f"<summary><b>compat doctor</b>: {escape(_verdict(findings))} · {escape(_machine(facts))}</summary>",
        "",
        "| | |",
        "|---|---|",
        *(f"| **{label}** | {escape(value)} |" for label, value in essentials(facts)),
        "",
    ]
    body: list[str] = []
    found = [f for f in findings if f.status is Status.FOUND]
    size = sum(len(line) + 1 for line in head)
    brief: list[Finding] = []
    for group in _groups(found):
        block = _finding(group[0], report_url) if len(group) == 1 else _group(group, report_url)
        cost = sum(len(line) + 1 for line in block)
        if brief or size + cost > _BUDGET:
            brief += group
            continue
        body += block
        size += cost
    if brief:
        body.append(f"**{len(brief)} more** (run `compat doctor` for the details):")
        body += [f"- {_MARK[f.severity]} · {escape(f.title)} · {ref(f.id, report_url)}" for f in brief]
        body.append("")
    undecided = [f for f in findings if f.status is Status.CANNOT_CHECK]
    if undecided:
        why = " (--strict: these count)" if strict else ""
        body.append(f"**Cannot check ({len(undecided)})**{why}:")
        body += [f"- {escape(f.title)} · {ref(f.id, report_url)}: {escape('; '.join(f.unknown))}" for f in undecided]
        body.append("")
    body += _waiver_lines(waivers, report_url)
    if not found and not undecided:
        body += ["No problems found.", ""]
    tail = [f"<sub>compat {__version__} · fails on {fail_on.value} or worse</sub>", "", "</details>"]
    text = "\n".join(head + body + tail) + "\n"
    if len(text) > LIMIT:  # pathological cannot-check lists: cut, and say so
        cut = text[: LIMIT - 200].rsplit("\n", 1)[0]
        text = cut + "\n\n… (cut to fit a comment; run `compat doctor` for the rest)\n\n</details>\n"
    return text


def _verdict(findings: tuple[Finding, ...]) -> str:
    c = summary_counts(findings)
    if not any(c[s.value] for s in Severity):
        return "no problems found"
    plural = lambda n, word: f"{n} {word}{'' if n == 1 else 's'}"  # noqa: E731
    return f"{plural(c['error'], 'error')}, {plural(c['warning'], 'warning')}, {c['info']} info"


def _machine(facts: Facts) -> str:
    return f"torch {torch_line(facts).split(' (')[0]} · {gpu_line(facts)}"


def ref(finding_id: str, report_url: str | None) -> str:
    """A finding id as code, linked to its page when a base URL is configured."""
    url = finding_url(report_url, finding_id)
    return f"[`{finding_id}`]({url})" if url else f"`{finding_id}`"


def fence(language: str, lines: list[str]) -> list[str]:
    """A fenced code block of `lines`, each one line; a fence inside an input cannot close it."""
    return [f"```{language}", *(one_line(line).replace("```", "` ` `") for line in lines), "```", ""]


def _finding(f: Finding, report_url: str | None) -> list[str]:
    lines = [f"#### {_MARK[f.severity]} · {escape(f.title)} · {ref(f.id, report_url)}", ""]
    if f.cause:
        lines.append(f"**Why:** {escape(f.cause)}<br>")
    if f.evidence:
        lines.append(f"**Seen:** {escape(evidence_text(f.evidence))}<br>")
    fix = fix_text(f.fix)
    if fix:
        lines.append(f"**Fix:** {escape(fix)}")
    lines.append("")
    if f.fix.commands:
        lines += fence("sh", list(f.fix.commands))
    if f.refs:
        lines += [f"Refs: {escape(', '.join(f.refs))}", ""]
    return lines


def _groups(found: list[Finding]) -> list[list[Finding]]:
    """Findings of one id and severity together (four missing requirements read as one problem)."""
    groups: dict[tuple[str, Severity], list[Finding]] = {}
    for f in found:
        groups.setdefault((f.id, f.severity), []).append(f)
    return list(groups.values())


def _group(same: list[Finding], report_url: str | None) -> list[str]:
    first = same[0]
    lines = [f"#### {_MARK[first.severity]} · {len(same)} × {ref(first.id, report_url)}", ""]
    for f in same:
        fix = fix_text(f.fix)
        lines.append(f"- {escape(f.title)}" + (f". **Fix:** {escape(fix)}" if fix else ""))
    lines.append("")
    commands = [c for f in same for c in f.fix.commands]
    if commands:
        lines += ["```sh", *dict.fromkeys(commands), "```", ""]
    return lines


def _waiver_lines(waivers: Waivers, report_url: str | None) -> list[str]:
    lines: list[str] = []
    if waivers.ignored:
        lines.append(f"**Ignored by the project's config ({len(waivers.ignored)})**:")
        for w in waivers.ignored:
            until = f" (until {w.ignore.until.isoformat()})" if w.ignore.until else ""
            lines.append(f"- {ref(w.finding.id, report_url)}: {escape(w.ignore.reason)}{until}")
        lines.append("")
    if waivers.expired:
        lines.append("**Expired ignores** (the findings count again):")
        for i in waivers.expired:
            assert i.until is not None
            lines.append(f"- {ref(i.id, report_url)}: expired {i.until.isoformat()} ({escape(i.reason)})")
        lines.append("")
    return lines
