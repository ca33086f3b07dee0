"""`compat explain`: which known failure a log shows, why, and how to fix it here."""

from __future__ import annotations

import typer

from compat.cli import app
from compat.cli._explain import GROUPS, PROGRESS_MIN_BYTES, _progress, explain_log
from compat.cli.exit_codes import documents_exits
from compat.cli.options import Shared, shared

__all__ = ["PROGRESS_MIN_BYTES", "_progress", "explain"]


@app.command()
@documents_exits("explain")
@shared("explain", *GROUPS)
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
    code = explain_log(opts, log, top=top, no_env=no_env, offline=offline, index_url=index_url, index_budget=index_budget)
    raise typer.Exit(code)
