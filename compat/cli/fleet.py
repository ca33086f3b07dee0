"""`compat fleet` (saved snapshots, --slurm, --ray) and `python -m compat.fleet` (under torchrun or any launcher)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from compat.cli import app
from compat.cli._common import MAX_SECONDS, settings
from compat.cli.doctor import FailOn
from compat.cli.exit_codes import ExitCode, documents_exits
from compat.cli.options import CONFIG, OUTPUT, Shared, shared

BaselineOpt = Annotated[Path | None, typer.Option(
    "--baseline", metavar="DIR", help="A known-good snapshot directory of the same cluster: also report what changed since.",
)]
FailOnOpt = Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a difference or finding has this severity or worse.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Also exit 1 when a check at that severity could not run.")]


@app.command()
@documents_exits("fleet")
@shared("fleet", ("matrix",), CONFIG, OUTPUT)
def fleet(
    opts: Shared,
    directory: Path | None = typer.Argument(None, metavar="DIR", help="A directory of `compat facts` files, one per node (NODE.json)."),
    slurm: bool = typer.Option(False, "--slurm", help="Inside a Slurm allocation: srun `compat facts` on every node first."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help="A Ray cluster: a facts task on every alive node."),
    out: Path | None = typer.Option(
        None, "--out", metavar="DIR", help="Where --slurm writes (a shared directory) and --ray saves the nodes' facts.",
    ),
    baseline: BaselineOpt = None,
    world_size: int | None = typer.Option(None, "--world-size", min=1, metavar="N", help="The job's world size, checked against the GPUs."),
    timeout: float = typer.Option(
        120.0, "--timeout", min=1.0, max=MAX_SECONDS, metavar="SECONDS",
        help="Seconds allowed to gathering; a node slower than this is reported.",
    ),
    fail_on: Annotated[FailOn | None, typer.Option(
        "--fail-on", help="Exit 1 when a difference or finding has this severity or worse (default: the config's fail-on, else error).",
    )] = None,
    strict: StrictOpt = False,
    smoke: bool = typer.Option(
        False, "--smoke",
        help="Also `compat smoke` on every node: with DIR the reports in DIR/smoke/NODE.json, with --slurm run now by srun.",
    ),
    smoke_budget: float = typer.Option(
        600.0, "--smoke-budget", min=10.0, max=MAX_SECONDS, metavar="SECONDS", help="--slurm --smoke: each node's smoke budget.",
    ),
) -> None:
    """Judge every node of a multi-node job: doctor on each, then what differs between them (--smoke: and what
    `compat smoke` found on each)."""
    from compat import api
    from compat.model.findings import Severity

    report = api.fleet(api.FleetRequest(
        directory=directory, slurm=slurm, ray=ray, out=out, baseline=baseline, world_size=world_size,
        timeout=timeout, fail_on=Severity(fail_on.value) if fail_on else None, strict=strict, matrix=opts.matrix,
        settings=settings(), config=opts.config, find_config=opts.find_config, node_smoke=smoke,
        node_smoke_budget=smoke_budget,
    ))
    from compat.report.formats import render

    opts.emit(render("fleet", opts.format, report, opts.presentation()))
    raise typer.Exit(ExitCode.VERDICT if report.failed else ExitCode.OK)


gather_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@gather_app.command()
@shared("fleet", ("matrix",), OUTPUT)
def gather(
    opts: Shared,
    smoke: bool = typer.Option(False, "--smoke", help="Also run a short all-reduce on the job's backend (NCCL on GPUs, else gloo)."),
    smoke_mib: float = typer.Option(8.0, "--smoke-mib", min=0.001, max=2.0**20, help="MiB per all-reduce of the smoke test."),
    smoke_timeout: float = typer.Option(30.0, "--smoke-timeout", min=1.0, max=MAX_SECONDS, help="Seconds allowed to the smoke test."),
    timeout: float = typer.Option(
        60.0, "--timeout", min=1.0, max=MAX_SECONDS, metavar="SECONDS", help="Seconds rank 0 waits for every rank's facts.",
    ),
    save: Path | None = typer.Option(None, "--save", help="Rank 0 saves each node's facts here (NODE.json), for a later --baseline."),
    baseline: BaselineOpt = None,
    fail_on: FailOnOpt = FailOn.error,
    strict: StrictOpt = False,
) -> None:
    """Run on every rank (torchrun ... -m compat.fleet): gather every rank's facts; rank 0 reports (-o: to a file)."""
    from compat import api
    from compat.model.findings import Severity

    report = api.fleet_torch(api.FleetRequest(
        timeout=timeout, smoke=smoke, smoke_bytes=max(4, int(smoke_mib * 2**20)) // 4 * 4, smoke_timeout=smoke_timeout,
        out=save, baseline=baseline, fail_on=Severity(fail_on.value), strict=strict, matrix=opts.matrix,
        settings=settings(),
    ))
    code = 0
    if isinstance(report, str):
        # A rank other than 0 that could not take part says why and exits 0: a non-zero exit makes
        # torchrun stop every rank, rank 0's report included.
        typer.echo(f"compat: warning: {report}", err=True)
    elif report is not None:
        from compat.report.formats import render

        opts.emit(render("fleet", opts.format, report, opts.presentation()))
        code = 1 if report.failed else 0
    sys.stdout.flush()
    sys.stderr.flush()
    # A collective left hanging in a daemon thread (a dead peer) must not hold the exit: leave at once.
    os._exit(code)


def gather_main() -> None:
    """The same contract as `compat`, through its one last resort: a user's error is one line and exit 2, a bug
    one line and exit 3."""
    from compat.cli import _main
    from compat.cli._common import terminal
    from compat.cli._output import SafeStream, open_closed_standard_streams
    from compat.sources.children import end_children_on_signals

    end_children_on_signals()
    open_closed_standard_streams()

    # The same filter as `compat`'s own output: no control sequence from an input, no secret.
    sys.stdout = SafeStream(sys.stdout, colour=terminal(sys.stdout).color)
    sys.stderr = SafeStream(sys.stderr, colour=terminal(sys.stderr).color)
    code: int | str | None = 0
    try:
        _main(gather_app, prog_name="python -m compat.fleet")
    except SystemExit as done:
        code = done.code
    sys.stdout.flush()
    sys.stderr.flush()
    # A collective left hanging in a daemon thread (a dead peer) must not hold the exit: leave at once.
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)
