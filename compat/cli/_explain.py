"""What `compat explain` does once its options are read, whichever parser read them: typer's (compat.cli.explain)
or, for plain arguments, compat.cli._fast_explain's, which spares a pasted log typer's start-up."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from compat.cli._common import settings, terminal
from compat.cli._shared import CONFIG, ENVIRONMENT, HARDWARE, LINKS, OUTPUT, Shared
from compat.cli.exit_codes import ExitCode

GROUPS = (ENVIRONMENT, HARDWARE, CONFIG, OUTPUT, LINKS)
"""The shared options `compat explain` offers."""


def explain_log(
    opts: Shared, log: str, *, top: int | None, no_env: bool, offline: bool, index_url: str | None,
    index_budget: float | None,
) -> int:
    """Explain `log`, write the result where `opts` says; the exit code."""
    from compat import api
    from compat.report.formats import render

    budget = {} if index_budget is None else {"index_budget": index_budget}
    request = opts.request(api.ExplainRequest, use_environment=not no_env, offline=offline, index_url=index_url, **budget)
    with _progress(log, api.log_size(log)) as progress:
        result = api.explain(request, _collected(api.read_log(log)), progress)
    shown = opts.presentation(top=top, report_url=opts.report_url or settings().report_url)
    opts.emit(render("explain", opts.format, result, shown))
    return ExitCode.OK if result.known else ExitCode.VERDICT


def _collected(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """The log's blocks; before the first, the garbage collector back on if compat.entry turned it off for start-up,
    what start-up made frozen first (moved out of the collector's sight: it lives as long as the process, and the
    first collection would otherwise walk all of it)."""
    for block in blocks:
        if not gc.isenabled():
            gc.freeze()
            gc.enable()
        yield block


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
