"""`compat lock` (targets + hardware → pinned set) and `compat plan` (installed → ordered steps)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt,
    ConfigOpt,
    DriverOpt,
    FactsOpt,
    GpusOpt,
    JsonOpt,
    LauncherOpt,
    MatrixOpt,
    NoConfigOpt,
    PythonOpt,
    ScriptOpt,
    declared,
    environment,
    overlays,
    settings,
)

NO_COMPATIBLE_SET = 4
"""`compat plan`'s exit code when no set meets the targets: 1 there means steps to run, and 3 is
kept for compat's own failures, so a script can tell "no way there" from a bug."""


class Format(str, Enum):
    requirements = "requirements"
    constraints = "constraints"
    json = "json"


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
def lock(
    targets: list[str] = typer.Argument(..., metavar="TARGET", help="Requirements to lock: trl[vllm], vllm>=0.7.2, flash-attn, ..."),
    fmt: Format = typer.Option(Format.requirements, "--format", help="requirements (pip -r), constraints (pip -c) or json."),
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    python_version: str | None = PyVersionOpt,
    platform: str | None = PlatformOpt,
    launcher: LauncherOpt = None,
    prefer_installed: bool = typer.Option(False, "--prefer-installed", help="Prefer the installed version of each package."),
    minor_compat: bool = MinorCompatOpt,
    python: PythonOpt = None,
    facts: FactsOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
    exclude_newer: str | None = typer.Option(
        None, "--exclude-newer", metavar="DATE",
        help="Only releases uploaded on or before this date (2025-03-01), as uv's --exclude-newer.",
    ),
    full: bool = typer.Option(
        False, "--full", help="Close the set over every dependency with `uv pip compile` (compat's pins as constraints, hashes).",
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", metavar="FILE", help="Write the lock here (atomically; kept as it was when the lock fails). "
        "A name ending in pylock.toml writes PEP 751 (needs --full).",
    ),
    index_url: str | None = typer.Option(
        None, "--index-url", metavar="URL", help="The index uv reads for --full (default: PIP_INDEX_URL).",
    ),
) -> None:
    """Resolve a pinned set for TARGETS on this (or the declared) hardware; a requirements file on stdout.

    Exit code: 0 locked, 1 no compatible set (the conflict is explained on stderr), 2 usage or data error.
    """
    from compat import api
    from compat.atomic import write_atomic
    from compat.errors import UsageError
    from compat.report.lock import LockFormat, render_conflict, render_full, render_lock

    pylock = output is not None and (output.name == "pylock.toml" or (output.name.startswith("pylock.") and output.suffix == ".toml"))
    if pylock and not full:
        raise UsageError(f"{output}: a pylock.toml lists every file with its hash; add --full")
    request = api.LockRequest(
        targets=tuple(targets),
        environment=environment(python=python, facts=facts, accelerate_config=accelerate_config, script=script),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
        config=config,
        find_config=not no_config,
        python_version=python_version,
        platform=platform,
        prefer_installed=prefer_installed,
        minor_compat=minor_compat,
        exclude_newer=exclude_newer,
        full=full,
        pylock=pylock,
        index_url=index_url,
    )
    result = api.lock_full(request) if full else api.lock(request)
    if isinstance(result, api.Conflict):
        typer.echo(render_conflict(result.targets, result.error), err=True, nl=False)
        raise typer.Exit(1)
    text = render_full(result) if isinstance(result, api.FullLock) else render_lock(result, LockFormat(fmt.value))
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_atomic(output, text.encode())
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"compat: wrote {output}", err=True)


@app.command()
def plan(
    targets: list[str] = typer.Argument(
        None, metavar="TARGET", help="Where to go (default: the installed top-level tracked packages, fixed).",
    ),
    json_out: JsonOpt = False,
    installer: InstallerChoice = typer.Option(InstallerChoice.pip, "--installer", help="Print pip or uv commands."),
    latest: bool = typer.Option(False, "--latest", help="Newest compatible versions instead of keeping what is installed."),
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    minor_compat: bool = MinorCompatOpt,
    python: PythonOpt = None,
    facts: FactsOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Print the ordered commands that take this environment to a good set; compat installs nothing.

    Exit code: 0 nothing to change, 1 steps to run, 2 usage or data error, 3 no compatible set.
    """
    from compat import api
    from compat.report.lock import render_conflict
    from compat.report.plan import render_json, render_text

    result = api.plan(api.PlanRequest(
        targets=tuple(targets or ()),
        environment=environment(python=python, facts=facts, accelerate_config=accelerate_config, script=script),
        declared=declared(gpus=gpus, driver=driver, launcher=launcher),
        matrix=overlays(matrix),
        settings=settings(),
        config=config,
        find_config=not no_config,
        latest=latest,
        minor_compat=minor_compat,
        installer=api.Installer(installer.value),
    ))
    if isinstance(result, api.Conflict):
        typer.echo(render_conflict(result.targets, result.error), err=True, nl=False)
        raise typer.Exit(NO_COMPATIBLE_SET)
    sys.stdout.write(render_json(result) if json_out else render_text(result))
    raise typer.Exit(1 if result.steps else 0)
