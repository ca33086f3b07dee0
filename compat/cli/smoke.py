"""`compat smoke`: run the stack on this machine, stage by stage, and explain what breaks."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from compat.cli import app
from compat.cli._common import MAX_PROCESSES, MAX_SECONDS
from compat.cli.options import OUTPUT, Shared, shared


@app.command()
@shared("smoke", ("python", "script", "accelerate_config", "matrix", "launcher"), OUTPUT)
def smoke(
    opts: Shared,
    trainer: str | None = typer.Option(
        None, "--trainer", metavar="NAMES",
        help="TRL trainers to run two steps of: sft, dpo, grpo, online-dpo (comma-separated; default: those --script uses, else sft).",
    ),
    processes: int = typer.Option(
        2, "--processes", min=1, max=MAX_PROCESSES, metavar="N",
        help="Processes of the launched training run (1: none; --accelerate-config's num_processes wins).",
    ),
    deepspeed: Path | None = typer.Option(
        None, "--deepspeed", metavar="FILE",
        help="DeepSpeed JSON config for the launched training run (on a CPU machine: not exercised, said why).",
    ),
    stages: str | None = typer.Option(
        None, "--stages", metavar="NAMES",
        help="Run only these stages: import, device, collective, kernels, serve, train (comma-separated; default: all).",
    ),
    budget: float = typer.Option(
        900.0, "--budget", min=10.0, max=MAX_SECONDS, metavar="SECONDS",
        help="Bound on the whole run; a stage that cannot start within it is skipped.",
    ),
) -> None:
    """Run the stack for real: import, device, collective, kernels, serve and two training steps per trainer on a
    tiny model built in place, each stage in a child process of the judged interpreter with a time bound.

    Nothing is downloaded and nothing outside a temp dir is written. A failing stage's output goes through
    explain. Exit code: 0 every stage run passed, 1 a stage failed, 2 usage or data error.
    """
    from compat import api
    from compat.report import smoke as words
    from compat.smoke.plan import parse_stages, parse_trainers

    def progress(result: object) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(words.render_progress(result))  # type: ignore[arg-type]

    report = api.smoke(opts.request(
        api.SmokeRequest, trainers=parse_trainers(trainer) if trainer is not None else (), budget=budget, processes=processes,
        deepspeed=deepspeed, stages=parse_stages(stages) if stages is not None else (),
    ), progress)
    from compat.report.formats import render

    if opts.output is not None and "%N" in str(opts.output):  # srun ... compat smoke -o DIR/smoke/%N.json
        import dataclasses

        from compat.sources.fleet.directory import facts_output_path

        opts = dataclasses.replace(opts, output=facts_output_path(str(opts.output)))
    opts.emit(render("smoke", opts.format, report, opts.presentation()))
    raise typer.Exit(1 if report.failed else 0)
