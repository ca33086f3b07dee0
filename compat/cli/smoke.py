"""`compat smoke`: run the stack on this machine, stage by stage, and explain what breaks."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from compat.cli import app
from compat.cli._common import AccelerateOpt, JsonOpt, MatrixOpt, PythonOpt, ScriptOpt, environment, overlays, settings


class SmokeFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    junit = "junit"


@app.command()
def smoke(
    python: PythonOpt = None,
    trainer: str | None = typer.Option(
        None, "--trainer", metavar="NAMES",
        help="TRL trainers to run two steps of: sft, dpo, grpo (comma-separated; default: those --script uses, else sft).",
    ),
    script: ScriptOpt = None,
    accelerate_config: AccelerateOpt = None,
    processes: int = typer.Option(
        2, "--processes", min=1, metavar="N", help="Processes of the `accelerate launch` training run (1: none).",
    ),
    budget: float = typer.Option(
        900.0, "--budget", min=10.0, metavar="SECONDS", help="Bound on the whole run; a stage that cannot start within it is skipped.",
    ),
    json_out: JsonOpt = False,
    output_format: SmokeFormat | None = typer.Option(
        None, "--format", show_default=False, help="Output format: text (default), json (as --json), markdown, junit.",
    ),
    matrix: MatrixOpt = None,
) -> None:
    """Run the stack for real: import, device, collective, kernels, serve and two training steps per trainer on a
    tiny model built in place, each stage in a child process of the judged interpreter with a time bound.

    Nothing is downloaded and nothing outside a temp dir is written. A failing stage's output goes through
    explain. Exit code: 0 every stage run passed, 1 a stage failed, 2 usage or data error.
    """
    from compat import api
    from compat.report import smoke as words
    from compat.smoke.plan import parse_trainers

    if json_out and output_format not in (None, SmokeFormat.json):
        from compat.errors import UsageError

        raise UsageError("--json and --format name different formats; give one")
    fmt = SmokeFormat.json if json_out else (output_format or SmokeFormat.text)

    def progress(result: object) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(words.render_progress(result))  # type: ignore[arg-type]

    report = api.smoke(api.SmokeRequest(
        environment=environment(python=python, accelerate_config=accelerate_config, script=script),
        trainers=parse_trainers(trainer) if trainer is not None else (),
        budget=budget, processes=processes, matrix=overlays(matrix), settings=settings(),
    ), progress)
    render = {SmokeFormat.text: words.render_text, SmokeFormat.json: words.render_json,
              SmokeFormat.markdown: words.render_markdown, SmokeFormat.junit: words.render_junit}[fmt]
    sys.stdout.write(render(report))
    raise typer.Exit(1 if report.failed else 0)
