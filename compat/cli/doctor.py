"""`compat doctor` and `compat facts`."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt,
    ConfigOpt,
    DriverOpt,
    FactsOpt,
    FormatOpt,
    GpusOpt,
    HostOpt,
    JsonOpt,
    LauncherOpt,
    MatrixOpt,
    NoConfigOpt,
    PythonOpt,
    ReportUrlOpt,
    RequirementsOpt,
    ScriptOpt,
    declared,
    environment,
    overlays,
    settings,
    terminal,
)
from compat.cli.exit_codes import ExitCode, documents_exits


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


@app.command()
@documents_exits("doctor")
def doctor(
    json_out: JsonOpt = False,
    python: PythonOpt = None,
    facts: FactsOpt = None,
    requirements: RequirementsOpt = None,
    host: HostOpt = False,
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", show_default=False,
        help="Exit 1 when a finding has this severity or worse (default: the config's fail-on, else error).",
    ),
    strict: bool = typer.Option(False, "--strict", help="Also exit 1 when a check at that severity could not run."),
    feature_links: bool = typer.Option(
        False, "--feature-links",
        help="Also list the imports that break only one feature (guarded, lazy or on-demand), as info.",
    ),
    matrix: MatrixOpt = None,
    output_format: FormatOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
    report_url: ReportUrlOpt = None,
) -> None:
    """Probe this environment and report what is wrong or at risk, why, and how to fix it."""
    from compat import api
    from compat.model.findings import Severity
    from compat.report.formats import DoctorFormat, render_doctor

    result = api.doctor(api.DoctorRequest(
        environment=environment(python=python, facts=facts, requirements=requirements,
                                accelerate_config=accelerate_config, script=script, host=host),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
        fail_on=Severity(fail_on.value) if fail_on else None,
        strict=strict,
        config=config,
        find_config=not no_config,
        report_url=report_url,
        feature_links=feature_links,
    ))
    fmt = output_format or (DoctorFormat.JSON if json_out else DoctorFormat.TEXT)
    cfg = result.config.path if result.config else None
    style = terminal(sys.stdout)
    sys.stdout.write(render_doctor(
        fmt, result.facts, result.findings, waivers=result.waivers, strict=result.strict, fail_on=result.fail_on,
        report_url=result.report_url, file=_artifact(requirements or cfg or facts), config=cfg,
        color=style.color, width=style.width,
    ))
    raise typer.Exit(ExitCode.VERDICT if result.failed else ExitCode.OK)


def _artifact(path: object) -> str | None:
    """The file CI annotations point at, relative to the working directory (the repository root in CI) when under it."""
    import os

    if path is None:
        return None
    text = str(path)
    if os.path.isabs(text):
        rel = os.path.relpath(text)
        return text if rel.startswith("..") else rel
    return text


@app.command("report")
@documents_exits("report")
def report(
    python: PythonOpt = None,
    facts: FactsOpt = None,
    requirements: RequirementsOpt = None,
    host: HostOpt = False,
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
    report_url: ReportUrlOpt = None,
) -> None:
    """A Markdown block to paste into a GitHub issue (`compat doctor --format markdown`); exits 0 whatever it finds."""
    from compat.report.formats import DoctorFormat

    try:
        doctor(json_out=False, python=python, facts=facts, requirements=requirements, host=host, gpus=gpus, driver=driver,
               launcher=launcher, accelerate_config=accelerate_config, script=script, fail_on=None, strict=False,
               matrix=matrix, output_format=DoctorFormat.MARKDOWN, config=config, no_config=no_config,
               report_url=report_url, feature_links=False)
    except typer.Exit as done:
        if done.exit_code != ExitCode.VERDICT:  # findings are what the block reports, not a failure of `report`
            raise


@app.command("facts")
@documents_exits("facts")
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
    short: Annotated[bool, typer.Option("--short", help="Only the essentials, one line each (for a bug report).")] = False,
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write the snapshot to this file instead (%N: the node's name, for srun and fleets).",
    ),
) -> None:
    """Print the facts snapshot of this environment as JSON (for bug reports, fleets and tests)."""
    from compat import api
    from compat.model.facts import dump_facts
    from compat.report.essentials import render_short

    env = api.facts(api.FactsRequest(
        environment=environment(python=python, facts=facts, requirements=requirements,
                                accelerate_config=accelerate_config, script=script),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
    ))
    text = render_short(env) if short else dump_facts(env)
    if output is None:
        sys.stdout.write(text)
        return
    from compat.cli._output import write_file
    from compat.errors import UsageError
    from compat.sources.fleet.directory import facts_output_path

    path = facts_output_path(output)
    try:
        write_file(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
