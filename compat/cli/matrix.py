"""`compat matrix show|validate|refresh|api`: inspect, check and regenerate the curated data."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from compat.cli import app
from compat.cli._common import MAX_SECONDS, overlays, settings, terminal
from compat.cli.exit_codes import ExitCode, documents_exits
from compat.cli.options import JsonOpt, MatrixOpt

matrix_app = typer.Typer(
    name="matrix",
    help="Inspect, check and regenerate the compatibility matrix.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(matrix_app, name="matrix")


@matrix_app.command("show")
@documents_exits("matrix")
def show(
    package: Annotated[str, typer.Argument(metavar="PACKAGE", help="A tracked package (vllm, trl, torch, ...).")],
    json_out: JsonOpt = False,
    since: Annotated[str | None, typer.Option("--since", metavar="VERSION", help="Only releases at or after this version.")] = None,
    matrix: MatrixOpt = None,
) -> None:
    """Every recorded release of PACKAGE with what it requires."""
    from compat import api
    from compat.report.matrix import TABLE_WIDTH, render_releases_json, render_releases_table

    found = api.matrix_show(api.ShowRequest(package=package, since=since, matrix=overlays(matrix), settings=settings()))
    if json_out:
        typer.echo(render_releases_json(found), nl=False)
        return
    width = terminal(sys.stdout, default_width=TABLE_WIDTH).width
    typer.echo(render_releases_table(found, since=since, width=width), nl=False)


@matrix_app.command("validate")
@documents_exits("matrix")
def validate(
    directory: Annotated[Path | None, typer.Argument(metavar="DIRECTORY",
    help="A matrix directory to check as an overlay on the shipped one.")] = None,
    alone: Annotated[bool, typer.Option("--alone", help="Check DIRECTORY by itself, without the shipped matrix.")] = False,
    audit: Annotated[bool, typer.Option("--audit/--no-audit", help="Run the signature regex backtracking audit.")] = True,
) -> None:
    """Load the whole matrix and check schemas, cross-references and sources; exit 2 on any problem."""
    from compat import api
    from compat.report.matrix import render_validation_ok, render_validation_problems

    result = api.matrix_validate(api.ValidateRequest(directory=directory, alone=alone, audit=audit))
    if not result.ok:
        typer.echo(render_validation_problems(result), err=True, nl=False)
        raise typer.Exit(ExitCode.USAGE)
    typer.echo(render_validation_ok(result), nl=False)


@matrix_app.command("refresh")
@documents_exits("matrix")
def refresh(
    packages: Annotated[list[str] | None, typer.Argument(metavar="PACKAGE",
    help="Packages to refresh (default: every tracked package).")] = None,
    index_url: Annotated[
        str | None, typer.Option("--index-url", metavar="URL", help="Simple API root (default: PIP_INDEX_URL; one of the two is required).")
    ] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", metavar="DIR", help="Directory of the releases files (default: the shipped matrix/releases).",
    )] = None,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", metavar="DIR",
    help="Metadata cache (default: $XDG_CACHE_HOME/compat).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Read every release's metadata from the index again.")] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, metavar="N", help="Concurrent requests.")] = 8,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, max=MAX_SECONDS, metavar="SECONDS", help="Seconds per request before retrying.",
    )] = 30.0,
    api_index: Annotated[bool, typer.Option(
        "--api", help="Extend the API index (matrix/api) instead: read the code of each release not yet indexed.",
    )] = False,
    limit: Annotated[int | None, typer.Option(
        "--limit", min=1, metavar="N", help="With --api: only the newest N releases not yet indexed.",
    )] = None,
    backfill: Annotated[int | None, typer.Option(
        "--backfill", min=1, metavar="N",
        help="With --api: read again the newest N indexed releases that lack class members, bases and signatures.",
    )] = None,
) -> None:
    """Regenerate matrix/releases/<package>.toml (or, with --api, extend matrix/api) from the package index."""
    from compat import api
    from compat.report.matrix import render_refresh

    if api_index:
        from compat.report.timeline import render_api_refresh

        outcomes, index = api.matrix_refresh_api(api.ApiRefreshRequest(
            packages=tuple(packages or ()), index_url=index_url, out=out, workers=min(workers, 8),
            timeout=max(timeout, 60.0), limit=limit, backfill=backfill,
            settings=settings(),
        ))
        typer.echo(render_api_refresh(outcomes, index), nl=False)
        return

    refreshed = api.matrix_refresh(api.RefreshRequest(
        packages=tuple(packages or ()),
        index_url=index_url,
        out=out,
        cache_dir=cache_dir,
        use_cache=not no_cache,
        workers=workers,
        timeout=timeout,
        settings=settings(),
    ))
    typer.echo(render_refresh(refreshed), nl=False)


@matrix_app.command("site")
@documents_exits("matrix")
def site(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Where to write the pages (created if missing).")],
    matrix: MatrixOpt = None,
) -> None:
    """Write the matrix as a static HTML site: compatibility tables and a page per signature and check."""
    from compat import api

    result = api.matrix_site(api.SiteRequest(out=directory, matrix=overlays(matrix), settings=settings()))
    typer.echo(f"wrote {result.pages} pages ({result.size // 1024} KiB) to {result.out}: "
               f"open {result.out / 'index.html'}")


@matrix_app.command("api")
@documents_exits("matrix")
def api_command(
    package: Annotated[str, typer.Argument(metavar="PACKAGE", help="A package (trl), or a release (trl==0.15.2) with --imports.")],
    name: Annotated[str | None, typer.Argument(metavar="NAME", help=(
        'A name (top_k_top_p_filtering), parameter ("Trainer.get_train_sampler(dataset)"), cli:SUB, '
        "model_type:X or module:M; none: a summary."
    ))] = None,
    imports: Annotated[str | None, typer.Option(
        "--imports", metavar="PACKAGE", help="List what the release imports from this package.",
    )] = None,
    json_out: JsonOpt = False,
    matrix: MatrixOpt = None,
) -> None:
    """Where a name, parameter, subcommand or model type exists, as ranges of releases (read from the code)."""
    from compat import api
    from compat.report.timeline import (
        render_api_imports,
        render_api_imports_json,
        render_api_lookup,
        render_api_lookup_json,
    )
    from compat.timeline.records import ApiImports

    found = api.matrix_api(api.ApiRequest(package=package, name=name, imports=imports, matrix=overlays(matrix)))
    if isinstance(found, ApiImports):
        typer.echo(render_api_imports_json(found) if json_out else render_api_imports(found), nl=False)
        return
    typer.echo(render_api_lookup_json(found) if json_out else render_api_lookup(found), nl=False)
