"""`compat doctor` and `compat facts`."""

from __future__ import annotations

import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from compat.cli import app
from compat.cli.exit_codes import ExitCode, documents_exits
from compat.cli.options import CONFIG, ENVIRONMENT, HARDWARE, LINKS, OUTPUT, REQUIREMENTS, Shared, shared

if TYPE_CHECKING:
    from compat.api import DoctorResult


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


@app.command()
@documents_exits("doctor")
@shared("doctor", ENVIRONMENT, REQUIREMENTS, HARDWARE, CONFIG, OUTPUT, LINKS)
def doctor(
    opts: Shared,
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", show_default=False,
        help="Exit 1 when a finding has this severity or worse (default: the config's fail-on, else error).",
    ),
    strict: bool = typer.Option(False, "--strict", help="Also exit 1 when a check at that severity could not run."),
    feature_links: bool = typer.Option(
        False, "--feature-links",
        help="Also list the imports that break only one feature (guarded, lazy or on-demand), as info.",
    ),
) -> None:
    """Probe this environment and report what is wrong or at risk, why, and how to fix it."""
    from compat.model.findings import Severity

    result = _doctor(opts, fail_on=Severity(fail_on.value) if fail_on else None, strict=strict, feature_links=feature_links)
    _emit("doctor", opts, result)
    raise typer.Exit(ExitCode.VERDICT if result.failed else ExitCode.OK)


def _doctor(opts: Shared, **judging: Any) -> DoctorResult:
    from compat import api

    return api.doctor(opts.request(api.DoctorRequest, report_url=opts.report_url, **judging))


def _emit(command: str, opts: Shared, result: DoctorResult) -> None:
    from compat.report.formats import render

    cfg = result.config.path if result.config else None
    opts.emit(render(command, opts.format, result, opts.presentation(artifact=_artifact(opts.requirements or cfg or opts.facts))))


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
@shared("report", ENVIRONMENT, REQUIREMENTS, HARDWARE, CONFIG, OUTPUT, LINKS)
def report(opts: Shared) -> None:
    """A Markdown block to paste into a GitHub issue (`compat doctor --format markdown`); exits 0 whatever it finds."""
    # Findings are what the block reports, not a failure of `report`: no threshold, exit 0.
    _emit("report", opts, _doctor(opts, fail_on=None, strict=False, feature_links=False))


@app.command("facts")
@documents_exits("facts")
@shared(None, ENVIRONMENT, REQUIREMENTS, HARDWARE)
def facts_command(
    opts: Shared,
    short: Annotated[bool, typer.Option("--short", help="Only the essentials, one line each (for a bug report).")] = False,
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write the snapshot to this file instead (%N: the node's name, for srun and fleets).",
    ),
) -> None:
    """Print the facts snapshot of this environment as JSON (for bug reports, fleets and tests)."""
    from compat import api
    from compat.model.facts import dump_facts
    from compat.report.essentials import render_short

    env = api.facts(opts.request(api.FactsRequest))
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
