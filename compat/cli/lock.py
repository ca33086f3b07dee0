"""`compat lock` (targets + hardware → pinned set) and `compat plan` (installed → ordered steps)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from compat.cli import app
from compat.cli._common import search_progress
from compat.cli.exit_codes import ExitCode, documents_exits
from compat.cli.options import CONFIG, ENVIRONMENT, FORMAT, HARDWARE, OUTPUT, Shared, shared


class InstallerChoice(str, Enum):
    pip = "pip"
    uv = "uv"


PyVersionOpt = typer.Option(None, "--python-version", metavar="X.Y", help="Target Python (3.11); default: the inspected interpreter's.")
PlatformOpt = typer.Option(
    None, "--platform", metavar="PLATFORM", help="Target platform: linux-x86_64, linux-aarch64, macos-arm64, windows-amd64.",
)
MinorCompatOpt = typer.Option(
    False, "--minor-compat",
    help="Accept torch builds that run on the driver only under CUDA minor-version compatibility "
    "(no PTX JIT: Triton/torch.compile may fail).",
)


@app.command()
@documents_exits("lock")
@shared("lock", HARDWARE, ENVIRONMENT, CONFIG, FORMAT)
def lock(
    opts: Shared,
    targets: list[str] = typer.Argument(..., metavar="TARGET", help="Requirements to lock: trl[vllm], vllm>=0.7.2, flash-attn, ..."),
    python_version: str | None = PyVersionOpt,
    platform: str | None = PlatformOpt,
    prefer_installed: bool = typer.Option(False, "--prefer-installed", help="Prefer the installed version of each package."),
    minor_compat: bool = MinorCompatOpt,
    exclude_newer: str | None = typer.Option(
        None, "--exclude-newer", metavar="DATE",
        help="Only releases uploaded on or before this date (2025-03-01), as uv's --exclude-newer.",
    ),
    full: bool = typer.Option(
        False, "--full", help="Close the set over every dependency with `uv pip compile` (compat's pins as constraints, hashes).",
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", metavar="FILE", help="Write the lock here (atomically; kept as it was when the lock fails). "
        "pylock.toml or pylock.NAME.toml writes PEP 751 (needs --full); another .toml name is refused.",
    ),
    index_url: str | None = typer.Option(
        None, "--index-url", metavar="URL", help="The index uv reads for --full (default: PIP_INDEX_URL).",
    ),
    allow_partial: bool = typer.Option(
        False, "--allow-partial",
        help="With --full: when the index cannot be used, write the tracked pins alone (unhashed) instead of failing.",
    ),
    verify: bool = typer.Option(
        False, "--verify",
        help="Install the set with uv into a throwaway venv and run `compat smoke` there first; write the lock only if "
             "it passes (nothing of this environment is touched).",
    ),
    find_links: list[str] = typer.Option(
        None, "--find-links", metavar="DIR", help="With --verify: a folder of wheels uv may install from (a local torch).",
    ),
    offline: bool = typer.Option(False, "--offline", help="With --verify: install from uv's cache and --find-links only."),
) -> None:
    """Resolve a pinned set for TARGETS on this (or the declared) hardware; a requirements file on stdout."""
    from compat import api
    from compat.cli._output import write_file
    from compat.errors import UsageError
    from compat.report.formats import render
    from compat.report.lock import render_conflict

    pylock = output is not None and output.suffix == ".toml"
    if pylock and output is not None and not (output.name == "pylock.toml" or output.name.startswith("pylock.")):
        # A .toml name promises TOML; PEP 751 names a lock pylock.toml or pylock.NAME.toml.
        raise UsageError(f"{output}: a .toml lock is PEP 751, named pylock.toml or pylock.NAME.toml (with --full); "
                         "use a .txt name for requirements")
    if pylock and not full:
        raise UsageError(f"{output}: a pylock.toml lists every file with its hash; add --full")
    if pylock and opts.format != "requirements":
        raise UsageError(f"{output}: a pylock.toml is written as PEP 751; --format {opts.format} does not apply")
    request = opts.request(
        api.LockRequest,
        targets=tuple(targets),
        python_version=python_version,
        platform=platform,
        prefer_installed=prefer_installed,
        minor_compat=minor_compat,
        exclude_newer=exclude_newer,
        full=full,
        pylock=pylock,
        index_url=index_url,
        allow_partial=allow_partial,
    )
    if verify:
        if full:
            raise UsageError("--verify installs the tracked lock; give --full or --verify, not both")
        checked = api.lock_verify(api.VerifyRequest(lock=request, find_links=tuple(find_links or ()), offline=offline))
        if isinstance(checked, api.Conflict):
            typer.echo(render_conflict(checked.targets, checked.error), err=True, nl=False)
            raise typer.Exit(ExitCode.VERDICT)
        from compat.report.smoke import render_verification

        typer.echo(render_verification(checked), err=True, nl=False)
        if not checked.passed:
            raise typer.Exit(ExitCode.VERDICT)  # a set that does not install or run here is not written
        result: api.Lock | api.FullLock | api.Conflict = checked.lock
    else:
        with search_progress() as progress:
            result = api.lock_full(request, progress) if full else api.lock(request, progress)
    if isinstance(result, api.Conflict):
        typer.echo(render_conflict(result.targets, result.error), err=True, nl=False)
        raise typer.Exit(ExitCode.VERDICT)
    text = render("lock", opts.format, result)
    from compat.report.lock import render_still_applies

    typer.echo(render_still_applies(result.lock if isinstance(result, api.FullLock) else result), err=True, nl=False)
    if isinstance(result, api.FullLock) and result.text is None:
        typer.echo(f"compat: partial lock (--allow-partial): only the {len(result.lock.pins)} tracked pins, "
                   "unhashed; uv pip compile could not close the set", err=True)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_file(output, text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"compat: wrote {output}", err=True)


@app.command()
@documents_exits("plan")
@shared("plan", HARDWARE, ENVIRONMENT, CONFIG, OUTPUT)
def plan(
    opts: Shared,
    targets: list[str] = typer.Argument(
        None, metavar="TARGET", help="Where to go (default: the installed top-level tracked packages, fixed).",
    ),
    installer: InstallerChoice = typer.Option(InstallerChoice.pip, "--installer", help="Print pip or uv commands."),
    latest: bool = typer.Option(False, "--latest", help="Newest compatible versions instead of keeping what is installed."),
    minor_compat: bool = MinorCompatOpt,
) -> None:
    """Print the ordered commands that take this environment to a good set; compat installs nothing."""
    from compat import api
    from compat.report.formats import render
    from compat.report.lock import render_conflict

    with search_progress() as progress:
        result = api.plan(opts.request(
            api.PlanRequest,
            targets=tuple(targets or ()),
            latest=latest,
            minor_compat=minor_compat,
            installer=api.Installer(installer.value),
        ), progress)
    if isinstance(result, api.Conflict):
        typer.echo(render_conflict(result.targets, result.error), err=True, nl=False)
        raise typer.Exit(ExitCode.NO_COMPATIBLE_SET)
    opts.emit(render("plan", opts.format, result, opts.presentation()))
    raise typer.Exit(ExitCode.VERDICT if result.steps else ExitCode.OK)
