"""`compat smoke`: the judged interpreter's stack run stage by stage, a failing stage explained."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from compat.api.environment import matrix_for
from compat.api.requests import SmokeRequest
from compat.errors import UsageError
from compat.model.facts import Facts
from compat.sources import gather

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.model.smoke import Diagnosis as SmokeDiagnosis
    from compat.model.smoke import SmokeReport
    from compat.model.smoke import StageResult as SmokeStageResult


def smoke(request: SmokeRequest, progress: Callable[[SmokeStageResult], None] | None = None) -> SmokeReport:
    """Each stage in a child of the judged interpreter, in a temp dir removed afterwards; a failing stage's output
    explained against the environment. `progress` is called with each stage's result as it ends."""
    import time

    from compat.model.smoke import SmokeReport, Status
    from compat.model.unknown import Unknown
    from compat.smoke.parse import failure_output, out_of_budget, skipped, stage_result
    from compat.smoke.plan import only_stages, plan_stages
    from compat.sources.smoke.run import child_env, launch_file, run_stage, scratch, this_environment

    started = time.monotonic()
    deadline = started + request.budget
    if request.environment.facts_file is not None:
        raise UsageError("compat smoke runs an interpreter: give --python, not --facts")
    # A missing --deepspeed file is said before the probe (a child that imports torch: seconds on a cold machine).
    deepspeed = None if request.deepspeed is None else launch_file(request.deepspeed, "--deepspeed")
    m = matrix_for(request.matrix, request.settings)
    env = gather(request.environment, request.declared, m, settings=request.settings)
    python = env.python.executable
    if isinstance(python, Unknown):
        raise UsageError(f"no interpreter to run: {python.reason}")
    accelerate = env.launch.accelerate if request.environment.accelerate_config is not None else None
    if isinstance(accelerate, Unknown):
        raise UsageError(f"--accelerate-config: {accelerate.reason}")
    if accelerate is not None and request.environment.accelerate_config is not None:
        accelerate = replace(accelerate, path=launch_file(request.environment.accelerate_config, "--accelerate-config"))
    launcher = None if isinstance(env.launch.launcher, Unknown) else env.launch.launcher
    plans = only_stages(plan_stages(env, trainers=request.trainers, processes=request.processes, accelerate=accelerate,
                                    deepspeed=deepspeed, launcher=launcher), request.stages)
    results = []
    with scratch() as root:
        child = child_env(this_environment(), root, bytecode=request.bytecode)
        for plan in plans:
            if plan.skip is not None:
                result = skipped(plan)
            elif deadline - time.monotonic() < 1.0:
                result = out_of_budget(plan.stage, request.budget)
            else:
                children = run_stage(python, plan, root=root, env=child, deadline=deadline)
                result = replace(stage_result(plan.stage, children), launch=plan.launch)
                if result.status is Status.FAIL:
                    result = replace(result, diagnosis=_smoke_diagnosis(failure_output(children), env, m))
            results.append(result)
            if progress is not None:
                progress(result)
    trainers = next((tuple(a for a in p.args if not a.startswith("--")) for p in plans if p.stage.value == "train"), ())
    return SmokeReport(python=python, stages=tuple(results), budget_s=request.budget,
                       seconds=round(time.monotonic() - started, 3), trainers=trainers)


def _smoke_diagnosis(output: str, env: Facts, matrix: Matrix) -> SmokeDiagnosis | None:
    """explain's reading of a failing stage's output, against the smoked environment; None for no output."""
    from compat.explain.match import explain as run_explain
    from compat.report.smoke import diagnosis

    if not output.strip():
        return None
    return diagnosis(run_explain(output.splitlines(keepends=True), matrix, env, environment="the smoked environment"))
