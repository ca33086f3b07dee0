"""A stage's result from what its children printed: the pure half of the smoke probe.

Each child prints one `@@compat-smoke {json}` line per step; everything else is the libraries'
output. A stage passes when every child exited 0 and no step failed; it is skipped when every step
it ran was skipped; anything else (a failed step, a crash, a child killed at its time bound) fails it.
"""

from __future__ import annotations

import json

from compat.model.smoke import ChildOutput, Stage, StagePlan, StageResult, Status, Step

MARK = "@@compat-smoke "
TAIL_LINES = 40
"""Lines of a failing stage's output the report keeps."""


def parse_steps(stdout: str) -> tuple[Step, ...]:
    """The step lines of a child's standard output, in order; a malformed one is kept as a failed step."""
    steps: list[Step] = []
    for line in stdout.splitlines():
        at = line.find(MARK)
        if at < 0:
            continue
        text = line[at + len(MARK):]
        try:
            doc = json.loads(text)
            steps.append(Step(name=str(doc["name"]), status=Status(doc["status"]), seconds=float(doc["seconds"]),
                              detail=None if doc.get("detail") is None else str(doc["detail"])))
        except (ValueError, KeyError, TypeError):
            steps.append(Step(name="(unreadable step line)", status=Status.FAIL, seconds=0.0, detail=text[:200]))
    return tuple(steps)


def skipped(plan: StagePlan) -> StageResult:
    """A stage the plan does not run."""
    return StageResult(stage=plan.stage, status=Status.SKIPPED, seconds=0.0, reason=plan.skip)


def out_of_budget(stage: Stage, budget: float) -> StageResult:
    """A stage that did not start: the run's budget was spent."""
    return StageResult(stage=stage, status=Status.SKIPPED, seconds=0.0,
                       reason=f"the budget of {budget:g} s was spent before it started")


def stage_result(stage: Stage, children: tuple[ChildOutput, ...]) -> StageResult:
    """Pass, fail or skipped, with the reason, the steps and a failing stage's output."""
    steps = tuple(s for c in children for s in parse_steps(c.stdout))
    seconds = round(sum(c.seconds for c in children), 3)
    problems: list[str] = []
    for c in children:
        if c.error is not None:
            problems.append(c.error)
        elif c.timed_out:
            problems.append(f"`{c.command}` ran past its time bound ({c.seconds:g} s) and was killed")
        elif c.returncode != 0 and not any(s.status is Status.FAIL for s in parse_steps(c.stdout)):
            problems.append(f"`{c.command}` exited {c.returncode}" + (
                f" ({_signal(c.returncode)})" if c.returncode is not None and c.returncode < 0 else ""))
    failed = [s.name for s in steps if s.status is Status.FAIL]
    if failed:
        problems.insert(0, "failed: " + ", ".join(failed))
    if problems:
        return StageResult(stage=stage, status=Status.FAIL, seconds=seconds, reason="; ".join(problems), steps=steps,
                           output=failure_output(children, lines=TAIL_LINES))
    if steps and all(s.status is Status.SKIPPED for s in steps):
        reasons = dict.fromkeys(s.detail or s.name for s in steps)
        return StageResult(stage=stage, status=Status.SKIPPED, seconds=seconds, reason="; ".join(reasons), steps=steps)
    return StageResult(stage=stage, status=Status.PASS, seconds=seconds, steps=steps)


def failure_output(children: tuple[ChildOutput, ...], *, lines: int | None = None) -> str:
    """The failing children's output without the step lines (stderr, then stdout); the last `lines` when given."""
    parts: list[str] = []
    for c in children:
        if c.returncode == 0 and not any(s.status is Status.FAIL for s in parse_steps(c.stdout)):
            continue
        for stream in (c.stderr, c.stdout):
            parts.extend(ln for ln in stream.splitlines() if MARK not in ln)
    kept = parts[-lines:] if lines else parts
    return "\n".join(kept)


def _signal(code: int) -> str:
    import signal

    try:
        return f"killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"
