"""`compat doctor` and `compat facts`."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt,
    DriverOpt,
    FactsOpt,
    GpusOpt,
    JsonOpt,
    LauncherOpt,
    MatrixOpt,
    PythonOpt,
    RequirementsOpt,
    ScriptOpt,
    declared,
    environment,
    overlays,
    settings,
)


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


@app.command()
def doctor(
    json_out: JsonOpt = False,
    python: PythonOpt = None,
    facts: FactsOpt = None,
    requirements: RequirementsOpt = None,
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", help="Exit 1 when a finding has this severity or worse."),
    strict: bool = typer.Option(False, "--strict", help="Also exit 1 when a check at that severity could not run."),
    matrix: MatrixOpt = None,
) -> None:
    """Probe this environment and report what is wrong or at risk, why, and how to fix it.

    Exit code: 0 clean, 1 findings at or above --fail-on, 2 usage or data error.
    """
    from compat import api
    from compat.model.findings import Severity
    from compat.report.doctor import render_json, render_text

    result = api.doctor(api.DoctorRequest(
        environment=environment(python=python, facts=facts, requirements=requirements,
                                accelerate_config=accelerate_config, script=script),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
        fail_on=Severity(fail_on.value),
        strict=strict,
    ))
    threshold = Severity(fail_on.value)
    if json_out:
        sys.stdout.write(render_json(result.facts, result.findings, fail_on=threshold))
    else:
        sys.stdout.write(render_text(result.facts, result.findings, color=sys.stdout.isatty(), fail_on=threshold))
    raise typer.Exit(1 if result.failed else 0)


@app.command("facts")
def facts_command(
    python: PythonOpt = None,
    facts: FactsOpt = None,
    requirements: RequirementsOpt = None,
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write the snapshot to this file instead (%N: the node's name, for srun and fleets).",
    ),
) -> None:
    """Print the facts snapshot of this environment as JSON (for bug reports, fleets and tests)."""
    from compat import api
    from compat.model.facts import dump_facts

    env = api.facts(api.FactsRequest(
        environment=environment(python=python, facts=facts, requirements=requirements,
                                accelerate_config=accelerate_config, script=script),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
    ))
    if output is None:
        sys.stdout.write(dump_facts(env))
        return
    from compat.atomic import write_atomic
    from compat.errors import UsageError
    from compat.sources.fleet.directory import facts_output_path

    path = facts_output_path(output)
    try:
        write_atomic(path, dump_facts(env).encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
