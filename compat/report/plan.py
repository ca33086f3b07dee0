"""Renderers for `compat plan`: numbered shell commands for a person, JSON for tools, a Markdown block and
GitHub annotations for CI. Pure."""

from __future__ import annotations

import json
import shlex

from compat.model import codec
from compat.model.lock import Plan, Step, StepKind
from compat.printable import one_line
from compat.report.lock import constraint_text, hardware_lines, note_text, reason_text


def render_json(plan: Plan) -> str:
    return json.dumps(codec.encode(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_text(plan: Plan) -> str:
    lock = plan.lock
    lines = [f"# plan to: {' '.join(lock.targets) or '(installed packages)'}"]
    lines.append(f"# for Python {lock.python_version} on {lock.platform}; " + "; ".join(hardware_lines(lock.hardware)))
    if not plan.steps:
        lines.append("# nothing to change: the installed versions already form the target set")
    for i, step in enumerate(plan.steps, 1):
        lines.append("")
        torch_first = any(s.kind is StepKind.TORCH for s in plan.steps[: i - 1])
        lines.append(f"# {i}. {step.kind.value}: {step_why(step, after_torch=torch_first)}")
        if step.clears:
            lines.append(f"#    clears: {', '.join(step.clears)}")
        lines.append(shlex.join(step.command))
    if plan.kept:
        lines.append("")
        lines.append("# kept as installed: " + ", ".join(f"{k.name} {k.version}" for k in plan.kept))
    for c in lock.constraints:
        lines.append(f"# kept off known failure {c.signature}: {constraint_text(c)}")
    for u in plan.uncleared:
        lines.append(f"# not cleared by a version change: {u.finding}: {u.advice or 'no version change clears it'}")
    for n in lock.notes:
        lines.append(f"# note: {note_text(n)}")
    # A comment stays a comment: a line break from an input (an overlay's reason) would make the
    # rest of it a command of its own in a pasted script.
    return "\n".join(one_line(line) if line.startswith("#") else line for line in lines) + "\n"


def step_why(step: Step, *, after_torch: bool = True) -> str:
    """One line: what the step changes (`after_torch`: a torch step came before it)."""
    if step.kind is StepKind.UNINSTALL:
        return "remove builds tied to the torch being replaced (another CUDA variant, or compiled against it)"
    if step.kind is StepKind.TORCH:
        source = "the PyTorch wheel index" if step.index_url else "the default index"
        return f"torch first, from {source}; " + "; ".join(reason_text(r) for r in step.reasons)
    if step.kind is StepKind.PACKAGES:
        return "the packages that pin or need that torch" if after_torch else "the packages to move, in one install"
    return "compiled against torch: rebuilt last, against the torch now installed"


def render_markdown(plan: Plan) -> str:
    """The plan as a block for an issue or a pull request: the verdict, then the script in a fenced block."""
    from compat.report.markdown import escape, fence

    n = len(plan.steps)
    head = f"{n} step(s) to a compatible set" if n else "nothing to change"
    targets = " ".join(plan.lock.targets) or "(installed packages)"
    return "\n".join([f"**compat plan** to {escape(targets)}: {head}", "", *fence("sh", render_text(plan).splitlines())]) + "\n"


def render_github(plan: Plan) -> str:
    """Workflow commands: a warning per step to run and per finding no version change clears, then a summary line."""
    from compat.report.ci import annotation

    lines = []
    for i, step in enumerate(plan.steps, 1):
        torch_first = any(s.kind is StepKind.TORCH for s in plan.steps[: i - 1])
        lines.append(annotation("warning", f"compat plan: step {i}, {step.kind.value}",
                                f"{step_why(step, after_torch=torch_first)}. Run: {shlex.join(step.command)}"))
    for u in plan.uncleared:
        lines.append(annotation("warning", f"compat plan: not cleared [{u.finding}]", u.advice or "no version change clears it"))
    lines.append(f"compat plan: {len(plan.steps)} step(s)" if plan.steps else "compat plan: nothing to change")
    return "\n".join(lines) + "\n"
