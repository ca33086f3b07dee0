"""Renderers for `compat plan`: numbered shell commands for a person, JSON for tools. Pure."""

from __future__ import annotations

import json
import shlex

from compat.model import codec
from compat.model.lock import Plan


def render_json(plan: Plan) -> str:
    return json.dumps(codec.encode(plan), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_text(plan: Plan) -> str:
    lock = plan.lock
    lines = [f"# plan to: {' '.join(lock.targets) or '(installed packages)'}"]
    lines.append(f"# for Python {lock.python_version} on {lock.platform}; " + "; ".join(lock.hardware))
    if not plan.steps:
        lines.append("# nothing to change: the installed versions already form the target set")
    for i, step in enumerate(plan.steps, 1):
        lines.append("")
        lines.append(f"# {i}. {step.kind.value}: {step.why}")
        if step.clears:
            lines.append(f"#    clears: {', '.join(step.clears)}")
        lines.append(shlex.join(step.command))
    if plan.kept:
        lines.append("")
        lines.append("# kept as installed: " + ", ".join(plan.kept))
    for c in lock.constraints:
        lines.append(f"# kept off known failure {c.signature}: {c.requirement}")
    for u in plan.uncleared:
        lines.append(f"# not cleared by a version change: {u}")
    for n in lock.notes:
        lines.append(f"# note: {n}")
    return "\n".join(lines) + "\n"
