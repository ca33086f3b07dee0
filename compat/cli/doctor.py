"""`compat doctor` and `compat facts`."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt, DriverOpt, FactsOpt, GpusOpt, JsonOpt, LauncherOpt, MatrixOpt, PythonOpt,
    RequirementsOpt, ScriptOpt, gather, load_matrix_for,
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
    from compat.judge.diagnose import diagnose, fails
    from compat.model.findings import Severity
    from compat.report.doctor import render_json, render_text

    m = load_matrix_for(matrix)
    env = gather(m, python=python, facts=facts, gpus=gpus, driver=driver, launcher=launcher,
                 accelerate_config=accelerate_config, script=script, requirements=requirements)
    findings = diagnose(env, m)
    if json_out:
        sys.stdout.write(render_json(env, findings))
    else:
        sys.stdout.write(render_text(env, findings, color=sys.stdout.isatty()))
    raise typer.Exit(1 if fails(findings, Severity(fail_on.value), strict=strict) else 0)


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
) -> None:
    """Print the facts snapshot of this environment as JSON (for bug reports, fleets and tests)."""
    from compat.model.facts import dump_facts

    m = load_matrix_for(matrix)
    env = gather(m, python=python, facts=facts, gpus=gpus, driver=driver, launcher=launcher,
                 accelerate_config=accelerate_config, script=script, requirements=requirements)
    sys.stdout.write(dump_facts(env))
