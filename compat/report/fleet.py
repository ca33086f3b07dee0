"""Renderers for `compat fleet`: one report for a job, grouped by what differs. Pure: records in, str out."""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.text import Text

from compat import __version__
from compat.model import codec
from compat.model.findings import Severity, Status
from compat.model.fleet import SCHEMA_VERSION as FLEET_SCHEMA_VERSION
from compat.model.fleet import (
    Aspect,
    Change,
    Difference,
    FleetReport,
    NodeSmoke,
    SharedFinding,
    Smoke,
    Variant,
    WorldCheck,
    WorldProblem,
)
from compat.model.smoke import Status as SmokeStatus
from compat.printable import one_line

_MARK = {Severity.ERROR: ("✗", "bold red"), Severity.WARNING: ("!", "bold yellow"), Severity.INFO: ("i", "bold blue")}
_NAME = {
    Aspect.TORCH_BUILD: "torch",
    Aspect.TORCH_CUDA: "torch built for CUDA",
    Aspect.NCCL: "NCCL",
    Aspect.DRIVER_BRANCH: "driver branch",
    Aspect.DRIVER: "driver",
    Aspect.PYTHON: "Python",
    Aspect.SHM: "/dev/shm of",
}
_ABSENT = {
    Aspect.PACKAGE: "no {subject}",
    Aspect.TORCH_BUILD: "no torch",
    Aspect.TORCH_CUDA: "a CPU-only torch",
    Aspect.NCCL: "torch without NCCL",
    Aspect.DRIVER_BRANCH: "no NVIDIA driver",
    Aspect.DRIVER: "no NVIDIA driver",
    Aspect.GPU_MODEL: "no GPUs",
    Aspect.GPU_MEMORY: "no GPUs",
    Aspect.ENV: "{subject} unset",
}
_WHAT = {
    Aspect.PACKAGE: "{subject} versions differ",
    Aspect.TORCH_BUILD: "torch builds differ",
    Aspect.TORCH_CUDA: "torch CUDA versions differ",
    Aspect.NCCL: "the NCCL torch loads differs",
    Aspect.DRIVER_BRANCH: "NVIDIA driver branches differ",
    Aspect.DRIVER: "NVIDIA driver versions differ",
    Aspect.GPU_MODEL: "GPU models differ",
    Aspect.GPU_MEMORY: "GPU memory differs",
    Aspect.GPU_COUNT: "visible GPU counts differ",
    Aspect.PYTHON: "Python versions differ",
    Aspect.ENV: "{subject} differs",
    Aspect.SHM: "/dev/shm sizes differ",
}


def render_json(report: FleetReport) -> str:
    doc = {"schema_version": FLEET_SCHEMA_VERSION, "compat_version": __version__, **codec.encode(report)}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def names(members: tuple[str, ...], *, limit: int = 6) -> str:
    """"a", "a and b", "a, b and c", "a, b, c, d, e and 27 more"."""
    if len(members) > limit:
        return f"{', '.join(members[:limit - 1])} and {len(members) - limit + 1} more"
    if len(members) == 1:
        return members[0]
    return f"{', '.join(members[:-1])} and {members[-1]}"


def _thing(aspect: Aspect, subject: str, value: str | None, *, short: bool = False) -> str:
    if value is None:
        return _ABSENT.get(aspect, "none").format(subject=subject)
    if aspect is Aspect.ENV:
        return f"{subject}={value}"
    if aspect is Aspect.GPU_COUNT:
        return f"{value} visible GPU{'s' if value != '1' else ''}"
    if aspect in (Aspect.GPU_MODEL, Aspect.GPU_MEMORY) or short:
        return value
    if aspect is Aspect.SHM:
        return f"/dev/shm of {value}"
    name = subject if aspect is Aspect.PACKAGE else _NAME[aspect]
    return f"{name} {value}"


def _group(variant: Variant) -> tuple[str, str]:
    """The members' names and the verb that agrees with them."""
    return names(variant.members), "has" if len(variant.members) == 1 else "have"


def difference_line(diff: Difference) -> str:
    """"node-07 and node-12 have torch 2.6.0+cu124; the other 30 nodes have 2.5.1+cu124"."""
    common, rest = diff.variants[0], diff.variants[1:]
    parts = []
    for variant in rest:
        who, verb = _group(variant)
        parts.append(f"{who} {verb} {_thing(diff.aspect, diff.subject, variant.value)}")
    if len(common.members) > 1 and len(common.members) > sum(len(v.members) for v in rest):
        noun = "nodes" if all("[" not in m for m in common.members) else "members"
        short = common.value is not None and diff.aspect not in (Aspect.ENV, Aspect.GPU_COUNT)
        parts.append(f"the other {len(common.members)} {noun} have {_thing(diff.aspect, diff.subject, common.value, short=short)}")
    else:
        who, verb = _group(common)
        parts.append(f"{who} {verb} {_thing(diff.aspect, diff.subject, common.value)}")
    return "; ".join(parts)


def world_line(check: WorldCheck) -> str:
    if check.problem is WorldProblem.MORE_RANKS_THAN_GPUS:
        return f"{names(check.members)} runs {check.ranks} ranks on {check.gpus} GPUs: ranks would share a GPU"
    return f"world size {check.world_size} but the nodes see {check.gpus} GPUs in all"


def change_line(change: Change) -> str:
    before = _thing(change.aspect, change.subject, change.before)
    after = _thing(change.aspect, change.subject, change.after, short=change.before is not None and change.after is not None
                   and change.aspect not in (Aspect.ENV, Aspect.GPU_COUNT))
    return f"{change.member}: {before} → {after}"


def _smoke_lines(smoke: Smoke, slow: set[tuple[str, str]]) -> list[tuple[str, str | None]]:
    lines: list[tuple[str, str | None]] = []
    if smoke.error:
        return [(f"  ✗ {smoke.error}", "red")]
    for r in smoke.ranks:
        if r.seconds is None:
            lines.append((f"  ✗ rank {r.rank} ({r.node}): {r.error}", "red"))
        else:
            lines.append((f"  rank {r.rank} ({r.node}): {r.seconds * 1000:.1f} ms", None))
    for p in smoke.pairs:
        if p.seconds is None or p.bus_gbps is None:
            lines.append((f"  ✗ {p.a} ↔ {p.b}: {p.error}", "red"))
        else:
            mark = "! " if (p.a, p.b) in slow else ""
            note = " (under half the median: a slow link)" if (p.a, p.b) in slow else ""
            lines.append((f"  {mark}{p.a} ↔ {p.b}: {p.bus_gbps:.2f} GB/s bus bandwidth ({p.seconds * 1000:.1f} ms){note}",
                          "yellow" if mark else None))
    return lines


def render_text(report: FleetReport, *, color: bool = False, width: int = 100) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False)
    console.print(Text(_head(report), style="bold"))
    sections = _Sections(console)
    found = [s for s in report.findings if s.finding.status is Status.FOUND]
    _disagreements(sections, report)
    _findings(sections, report, found)
    _measured(sections, report)
    console.print()
    console.print(_closing(report, found))
    return out.getvalue()


def _head(report: FleetReport) -> str:
    answered = len(report.members) - len(report.missing)
    head = f"compat fleet: {report.nodes} node{'s' if report.nodes != 1 else ''}"
    if len(report.members) != report.nodes:
        head += f", {len(report.members)} ranks"
    head += f", {answered} answered"
    if report.world_size is not None:
        head += f" (world size {report.world_size})"
    return head


class _Sections:
    """A titled section of the text report and its items, on one console."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def section(self, title: str) -> None:
        self.console.print()
        self.console.print(Text(title, style="bold"))

    def item(self, severity: Severity, title: str, detail: str | None = None) -> None:
        mark, style = _MARK[severity]
        line = Text("  ")
        line.append(f"{mark} {severity.value}", style=style)
        line.append(f"  {one_line(title)}")
        self.console.print(line)
        if detail:
            self.console.print(Text(f"      {one_line(detail)}"))


def _disagreements(out: _Sections, report: FleetReport) -> None:
    """The members that did not answer, the differences between nodes, the world size."""
    if report.missing:
        out.section(f"No answer ({len(report.missing)})")
        for m in report.missing:
            out.item(Severity.ERROR, f"{m.member}: {m.state.value}", m.detail)
    if report.differences:
        out.section(f"Differences between nodes ({len(report.differences)})")
        for d in report.differences:
            out.item(d.severity, _WHAT[d.aspect].format(subject=d.subject), difference_line(d))
    if report.world:
        out.section("World size")
        for w in report.world:
            out.item(w.severity, world_line(w))


def _findings(out: _Sections, report: FleetReport, found: list[SharedFinding]) -> None:
    """Doctor's findings on the members, and what it could not check."""
    undecided = [s for s in report.findings if s.finding.status is Status.CANNOT_CHECK]
    if found:
        out.section(f"Doctor's findings ({len(found)})")
        for s in found:
            total = report.nodes if "[" not in "".join(s.members) else len(report.members)
            out.item(s.finding.severity, s.finding.title, f"{s.finding.id} on {names(s.members)} ({len(s.members)} of {total})")
    if undecided:
        out.section(f"Cannot check ({len(undecided)})")
        for s in undecided:
            out.console.print(Text(f"  ? {s.finding.id} on {names(s.members)}"))


def _measured(out: _Sections, report: FleetReport) -> None:
    """The smoke test's timings and the changes since the baseline."""
    if report.smoke is not None:
        sm = report.smoke
        out.section(f"Smoke test: all-reduce of {sm.size_bytes / 2**20:g} MiB over {sm.backend}, bound {sm.timeout_s:g} s")
        slow = {(p.a, p.b) for p in report.slow_pairs}
        for text, style in _smoke_lines(sm, slow):
            out.console.print(Text(text, style=style or ""))
    if report.node_smoke:
        _node_smoke(out, report)
    if report.baseline is not None:
        out.section(f"Since the baseline ({len(report.baseline)} change{'s' if len(report.baseline) != 1 else ''})")
        for c in report.baseline:
            out.console.print(Text(f"  {change_line(c)}"))


def node_smoke_lines(node: NodeSmoke) -> list[tuple[str, str | None]]:
    """(title, detail) per problem of one node's `compat smoke`: no report, or each failed stage with explain's
    verdict and fix; none when it passed."""
    if node.error is not None:
        return [(f"{node.node}: no smoke report", node.error)]
    lines: list[tuple[str, str | None]] = []
    for st in node.stages:
        if st.status is not SmokeStatus.FAIL:
            continue
        d = st.diagnosis
        words = [f"explain: {d.verdict}" + (f" [{d.cause_id}]" if d.cause_id else "") + f": {d.title}"] if d else []
        words += [f"fix: {d.fix}"] if d is not None and d.fix else []
        lines.append((f"{node.node}: {st.stage.value} failed ({st.reason})" if st.reason else
                      f"{node.node}: {st.stage.value} failed", "; ".join(words) or None))
    return lines


def _node_smoke(out: _Sections, report: FleetReport) -> None:
    """`compat smoke` on every node: which node failed which stage, with explain's verdict; the passing nodes at once."""
    failing = [n for n in report.node_smoke if node_smoke_lines(n)]
    passing = [n for n in report.node_smoke if not node_smoke_lines(n)]
    out.section(f"compat smoke on every node ({len(failing)} of {len(report.node_smoke)} failed)")
    for n in failing:
        for title, detail in node_smoke_lines(n):
            out.item(Severity.ERROR, title, detail)
    if passing:
        ran = sorted({st.stage.value for n in passing for st in n.stages if st.status is SmokeStatus.PASS})
        out.console.print(Text(f"  ✓ passed on {names(tuple(n.node for n in passing))} ({len(passing)} of "
                               f"{len(report.node_smoke)}): {', '.join(ran) or 'no stage ran'}"))


def _closing(report: FleetReport, found: list[SharedFinding]) -> Text:
    if report.failed:
        return Text("The nodes of this job do not agree, or some did not answer: fix the errors above.", style="bold red")
    if report.differences or report.world or found:
        return Text("No difference at the failing threshold; see the notes above.", style="bold")
    return Text("All nodes agree.", style="bold green")


def render_markdown(report: FleetReport) -> str:
    """A `<details>` block for an issue: the verdict in the summary line, the text report in a fenced block."""
    from compat.report.markdown import escape, fence

    verdict = "the nodes do not agree" if report.failed else "no difference at the failing threshold"
    lines = render_text(report).splitlines()
    return "\n".join(["<details>", f"<summary><b>compat fleet</b>: {escape(lines[0].removeprefix('compat fleet: '))} · "
                      f"{verdict}</summary>", "", *fence("text", lines[1:]), "</details>"]) + "\n"


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(report: FleetReport) -> str:
    """Workflow commands: one annotation per missing node, difference, world-size check and finding, then a summary line."""
    from compat.report.ci import annotation

    lines = [annotation("error", f"compat fleet: {m.member} {m.state.value}", m.detail or m.state.value) for m in report.missing]
    lines += [annotation(_GITHUB_LEVEL[d.severity], f"compat fleet: {_WHAT[d.aspect].format(subject=d.subject)}",
                         difference_line(d)) for d in report.differences]
    lines += [annotation(_GITHUB_LEVEL[w.severity], "compat fleet: world size", world_line(w)) for w in report.world]
    lines += [annotation(_GITHUB_LEVEL[s.finding.severity], f"compat fleet: {s.finding.title} [{s.finding.id}]",
                         f"on {names(s.members)} ({len(s.members)} of {len(report.members)})")
              for s in report.findings if s.finding.status is Status.FOUND]
    lines += [annotation("error", f"compat fleet: {title}", detail or title)
              for n in report.node_smoke for title, detail in node_smoke_lines(n)]
    lines.append(f"compat fleet: {report.nodes} node(s), {'failed' if report.failed else 'passed'}")
    return "\n".join(lines) + "\n"
