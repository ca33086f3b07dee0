"""`compat explain`: which known failure a log shows, why, and how to fix it here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer

from compat.cli import app
from compat.cli._common import settings, terminal
from compat.cli.exit_codes import ExitCode, documents_exits
from compat.cli.options import CONFIG, ENVIRONMENT, HARDWARE, LINKS, OUTPUT, Shared, shared


@app.command()
@documents_exits("explain")
@shared("explain", ENVIRONMENT, HARDWARE, CONFIG, OUTPUT, LINKS)
def explain(
    opts: Shared,
    log: str = typer.Argument("-", metavar="LOG", help="Log file (plain or .gz); '-' reads standard input."),
    top: int | None = typer.Option(None, "--top", min=1, metavar="N", help="Show at most N matches."),
    no_env: bool = typer.Option(False, "--no-env", help="Do not probe this environment; rank by the log alone."),
    offline: bool = typer.Option(
        False, "--offline", help="Read nothing from the package index: a package the API index lacks is answered from the cache alone.",
    ),
    index_url: str | None = typer.Option(
        None, "--index-url", metavar="URL",
        help="The index a package the API index lacks is indexed from, on demand (default: PIP_INDEX_URL).",
    ),
    index_budget: float | None = typer.Option(  # None when absent: typer coerces a given number only (no pydantic import)
        None, "--index-budget", min=0, max=600, metavar="SECONDS",
        help="Seconds allowed to the package index for that (default: 20); 0 reads nothing.",
    ),
) -> None:
    """Match an error log against the catalog of known failures, best first, with the fix for this environment.

    Every error in the log gets a verdict: known, unknown-environment (an environment failure compat cannot
    name) or not-environment.
    """
    from compat import api
    from compat.report.formats import render

    budget = {} if index_budget is None else {"index_budget": index_budget}
    request = opts.request(api.ExplainRequest, use_environment=not no_env, offline=offline, index_url=index_url, **budget)
    with _progress(log, api.log_size(log)) as progress:
        result = api.explain(request, api.read_log(log), progress)
    shown = opts.presentation(top=top, report_url=opts.report_url or settings().report_url)
    opts.emit(render("explain", opts.format, result, shown))
    raise typer.Exit(ExitCode.OK if result.known else ExitCode.VERDICT)


PROGRESS_MIN_BYTES = 64 * 1024 * 1024
"""Logs smaller than this are read in about a second: no progress bar."""


@contextmanager
def _progress(log: str, size: int | None) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for a large log when stderr is a terminal (never in a pipe or a file)."""
    if size is None or size < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    # A .gz log's stored size is not the size read: show the amount read and the speed only.
    total = None if log.endswith(".gz") else size
    columns = [TextColumn("reading log"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn()]
    width = terminal(sys.stderr).width
    if width < 70:  # a narrow pane: the bar and the amount read, nothing that would wrap
        columns = [TextColumn("log"), BarColumn(bar_width=max(width - 30, 5)), DownloadColumn()]
    else:
        columns[1] = BarColumn(bar_width=min(40, width - 65))
    console = Console(stderr=True, width=width, color_system="standard" if terminal(sys.stderr).color else None)
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("log", total=total)
        yield lambda n: bar.advance(task, n)

