"""`compat matrix show|validate|refresh`: inspect, check and regenerate the curated data.

The two renderers of `show` are pure functions at the top of this module (the command functions
only call them); they move to compat/report/ if another command ever needs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from compat.cli import app
from compat.cli._common import JsonOpt, MatrixOpt

SCHEMA_VERSION = 1

matrix_app = typer.Typer(
    name="matrix",
    help="Inspect, check and regenerate the compatibility matrix.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(matrix_app, name="matrix")

# Per package, the dependencies worth a column in `show` (package, extra that brings it or None).
_COLUMNS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "vllm": (("torch", None), ("transformers", None)),
    "trl": (("vllm", "vllm"), ("transformers", None), ("accelerate", None)),
    "torch": (("triton", None),),
    "torchvision": (("torch", None),),
    "torchaudio": (("torch", None),),
    "xformers": (("torch", None),),
    "flashinfer-python": (("torch", None),),
    "accelerate": (("torch", None),),
    "peft": (("torch", None), ("transformers", None), ("accelerate", None)),
    "transformers": (("torch", "torch"), ("accelerate", "torch")),
    "liger-kernel": (("torch", None), ("triton", None)),
    "bitsandbytes": (("torch", None),),
    "datasets": (),
    "deepspeed": (("torch", None),),
    "flash-attn": (("torch", None),),
    "triton": (),
}


def _via_extra(req, extra: str | None) -> bool:
    text = str(req.marker) if req.marker else ""
    has_extra = "extra ==" in text
    if extra is None:
        return not has_extra
    return f'extra == "{extra}"' in text


def _cell(release, dep: str, extra: str | None) -> str:
    if release.requires is None:
        return "?"
    parts = []
    for req in release.requires_of(dep):
        if not _via_extra(req, extra):
            continue
        text = str(req.specifier) or "any"
        others = [m for m in (str(req.marker).split(" and ") if req.marker else []) if "extra ==" not in m]
        parts.append(text + (" *" if others else ""))
    return " | ".join(dict.fromkeys(parts)) or "-"


def render_releases_table(package, *, since: str | None = None) -> str:
    """A rich table of a package's releases, newest first (pure: returns the text)."""
    import io

    from packaging.version import Version
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table as RichTable

    from compat.model.unknown import Unknown

    columns = _COLUMNS.get(package.package, ())
    table = RichTable(title=f"{package.package}: {len(package.releases)} releases", show_lines=False)
    table.add_column("version")
    table.add_column("uploaded")
    for dep, extra in columns:
        table.add_column(escape(f"{dep} [{extra}]" if extra and dep != extra else (f"[{dep}]" if extra else dep)))
    table.add_column("python")
    table.add_column("note")
    floor = Version(since) if since else None
    for r in reversed(package.releases):
        if floor is not None and r.version < floor:
            continue
        note = []
        if r.yanked:
            note.append("yanked" + (f": {r.yanked_reason}" if r.yanked_reason else ""))
        if r.requires_unknown is not None:
            note.append(f"requirements unknown ({r.requires_unknown.reason})")
        table.add_row(
            str(r.version),
            str(r.uploaded) if not isinstance(r.uploaded, Unknown) else "?",
            *(_cell(r, dep, extra) for dep, extra in columns),
            str(r.requires_python) if r.requires_python is not None else "any",
            "; ".join(note),
        )
    buffer = io.StringIO()
    Console(file=buffer, width=160, force_terminal=False, color_system=None).print(table)
    return buffer.getvalue() + "* = only under an environment marker (see --json)\n"


def render_releases_json(package) -> str:
    """`show --json`: schema_version, sorted keys, releases oldest first."""
    from compat.matrix.releases import release_requires_text
    from compat.model.unknown import Unknown

    releases = []
    for r in package.releases:
        item = {
            "version": str(r.version),
            "uploaded": None if isinstance(r.uploaded, Unknown) else r.uploaded,
            "yanked": r.yanked,
            "requires_python": str(r.requires_python) if r.requires_python is not None else None,
            "requires": release_requires_text(r),
            "extras": list(r.extras),
        }
        if r.yanked_reason:
            item["yanked_reason"] = r.yanked_reason
        if r.requires_unknown is not None:
            item["requires_unknown"] = r.requires_unknown.reason
        releases.append(item)
    doc = {"schema_version": SCHEMA_VERSION, "package": package.package, "releases": releases}
    return json.dumps(doc, sort_keys=True, indent=2) + "\n"


@matrix_app.command("show")
def show(
    package: Annotated[str, typer.Argument(help="A tracked package (vllm, trl, torch, ...).")],
    json_out: JsonOpt = False,
    since: Annotated[Optional[str], typer.Option("--since", help="Only releases at or after this version.")] = None,
    matrix: MatrixOpt = None,
) -> None:
    """Every recorded release of PACKAGE with what it requires."""
    from packaging.version import InvalidVersion, Version

    from compat.errors import UsageError
    from compat.matrix import shipped_matrix_dir
    from compat.matrix.releases import ReleaseIndex

    if since is not None:
        try:
            Version(since)
        except InvalidVersion as exc:
            raise UsageError(f"--since: {since!r} is not a version") from exc
    dirs = [shipped_matrix_dir() / "releases", *(Path(d) / "releases" for d in matrix or ())]
    index = ReleaseIndex(dirs)
    found = index.get(package)
    if found is None:
        raise UsageError(f"no releases recorded for {package!r} (known: {', '.join(index.packages())})")
    # Only the releases are read (not load_matrix): show must work while another part is broken.
    typer.echo(render_releases_json(found) if json_out else render_releases_table(found, since=since), nl=False)


@matrix_app.command("validate")
def validate(
    directory: Annotated[Optional[Path], typer.Argument(help="A matrix directory to check as an overlay on the shipped one.")] = None,
    alone: Annotated[bool, typer.Option("--alone", help="Check DIRECTORY by itself, without the shipped matrix.")] = False,
    audit: Annotated[bool, typer.Option("--audit/--no-audit", help="Run the signature regex backtracking audit.")] = True,
) -> None:
    """Load the whole matrix and check schemas, cross-references and sources; exit 2 on any problem."""
    from compat.errors import UsageError
    from compat.maintain.validate import validate_matrix

    if alone and directory is None:
        raise UsageError("--alone needs a DIRECTORY")
    if alone:
        result = validate_matrix(base=directory, complete=False, audit_patterns=audit)
    else:
        result = validate_matrix(tuple([directory] if directory else ()), audit_patterns=audit)
    for line in result.problems:
        typer.echo(f"compat: error: {line}", err=True)
    if not result.ok:
        typer.echo(f"{len(result.problems)} problem(s) in {', '.join(map(str, result.roots))}", err=True)
        raise typer.Exit(2)
    typer.echo(
        f"matrix OK: {result.packages} packages, {result.releases} releases, {result.signatures} signatures"
        f" ({', '.join(map(str, result.roots))})"
    )


@matrix_app.command("refresh")
def refresh(
    packages: Annotated[Optional[list[str]], typer.Argument(help="Packages to refresh (default: every tracked package).")] = None,
    index_url: Annotated[
        Optional[str], typer.Option("--index-url", help="Simple API root (default: PIP_INDEX_URL, else pip's default index).")
    ] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Directory of the releases files (default: the shipped matrix/releases).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", help="Metadata cache (default: $XDG_CACHE_HOME/compat).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Read every release's metadata from the index again.")] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="Concurrent requests.")] = 8,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per request before retrying.")] = 30.0,
) -> None:
    """Regenerate matrix/releases/<package>.toml from the package index."""
    from compat.maintain.index import IndexClient, default_index_url, redact
    from compat.matrix import shipped_matrix_dir
    from compat.maintain.refresh import default_cache_dir, refresh as run_refresh

    url = index_url or default_index_url()
    client = IndexClient(url, timeout=timeout)
    result = run_refresh(
        packages or (),
        out_dir=out or shipped_matrix_dir() / "releases",
        client=client,
        cache_dir=None if no_cache else (cache_dir or default_cache_dir()),
        workers=workers,
    )
    for o in result.outcomes:
        state = "updated" if o.changed else "unchanged"
        unknown = f", {o.unknown} without readable requirements" if o.unknown else ""
        typer.echo(f"{o.package}: {o.releases} releases, {o.fetched} metadata fetched{unknown}: {state}")
    typer.echo(f"{result.requests} requests to {redact(url)}")
