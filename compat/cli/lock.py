"""`compat lock` (targets + hardware → pinned set) and `compat plan` (installed → ordered steps)."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Optional

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt, DriverOpt, FactsOpt, GpusOpt, JsonOpt, LauncherOpt, MatrixOpt, PythonOpt, ScriptOpt,
    gather, load_matrix_for,
)


class Format(str, Enum):
    requirements = "requirements"
    constraints = "constraints"
    json = "json"


class InstallerChoice(str, Enum):
    pip = "pip"
    uv = "uv"


PyVersionOpt = typer.Option(None, "--python-version", help="Target Python (3.11); default: the inspected interpreter's.")
PlatformOpt = typer.Option(None, "--platform", help="Target platform: linux-x86_64, linux-aarch64, macos-arm64, windows-amd64.")
MinorCompatOpt = typer.Option(
    False, "--minor-compat",
    help="Accept torch builds that run on the driver only under CUDA minor-version compatibility (no PTX JIT: Triton/torch.compile may fail).",
)


@app.command()
def lock(
    targets: list[str] = typer.Argument(..., help="Requirements to lock: trl[vllm], vllm>=0.7.2, flash-attn, ..."),
    fmt: Format = typer.Option(Format.requirements, "--format", help="requirements (pip -r), constraints (pip -c) or json."),
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    python_version: Optional[str] = PyVersionOpt,
    platform: Optional[str] = PlatformOpt,
    launcher: LauncherOpt = None,
    prefer_installed: bool = typer.Option(False, "--prefer-installed", help="Prefer the installed version of each package."),
    minor_compat: bool = MinorCompatOpt,
    python: PythonOpt = None,
    facts: FactsOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
) -> None:
    """Resolve a pinned set for TARGETS on this (or the declared) hardware; a requirements file on stdout.

    Exit code: 0 locked, 1 no compatible set (the conflict is explained on stderr), 2 usage or data error.
    """
    from compat.errors import ResolutionError
    from compat.report.lock import LockFormat, render_conflict, render_lock
    from compat.resolve import resolve, target_facts

    m = load_matrix_for(matrix)
    fully_declared = gpus is not None and driver is not None and python_version is not None
    if fully_declared and not (prefer_installed or python or facts or accelerate_config or script):
        # Nothing on this host matters: skip the probe (it imports torch in a child process).
        from compat.sources.declared import Declared, apply_declared
        from compat.resolve import declared_target

        env = apply_declared(declared_target(python_version=python_version, platform=platform),
                             Declared(gpus=gpus, driver=driver, launcher=launcher), m)
    else:
        env = gather(m, python=python, facts=facts, gpus=gpus, driver=driver, launcher=launcher,
                     accelerate_config=accelerate_config, script=script)
        env = target_facts(env, python_version=python_version, platform=platform)
    try:
        result = resolve(targets, env, m, prefer_installed=prefer_installed, minor_compat=minor_compat)
    except ResolutionError as exc:
        sys.stderr.write(render_conflict(targets, exc))
        raise typer.Exit(1) from None
    sys.stdout.write(render_lock(result, LockFormat(fmt.value)))


@app.command()
def plan(
    targets: list[str] = typer.Argument(None, help="Where to go (default: the installed top-level tracked packages, fixed)."),
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
) -> None:
    """Print the ordered commands that take this environment to a good set; compat installs nothing.

    Exit code: 0 nothing to change, 1 steps to run (or no compatible set), 2 usage or data error.
    """
    from compat.errors import ResolutionError, UsageError
    from compat.matrix.releases import TRACKED
    from compat.judge.diagnose import diagnose
    from compat.resolve.plan import Installer, default_targets, fix_requirements
    from compat.resolve.plan import plan as make_plan
    from compat.report.lock import render_conflict
    from compat.report.plan import render_json, render_text
    from compat.resolve import resolve, target_facts

    m = load_matrix_for(matrix)
    env = target_facts(gather(m, python=python, facts=facts, gpus=gpus, driver=driver, launcher=launcher,
                              accelerate_config=accelerate_config, script=script))
    findings = diagnose(env, m)
    wanted = list(targets or default_targets(env, TRACKED))
    if not wanted:
        raise UsageError("no tracked package is installed; name the targets (compat plan 'trl[vllm]')")
    wanted += [r for r in fix_requirements(findings) if r not in wanted]
    try:
        result = resolve(wanted, env, m, prefer_installed=not latest, minor_compat=minor_compat)
    except ResolutionError as exc:
        sys.stderr.write(render_conflict(wanted, exc))
        raise typer.Exit(1) from None
    steps = make_plan(env, result, findings, installer=Installer(installer.value),
                      python=str(python) if python else None)
    sys.stdout.write(render_json(steps) if json_out else render_text(steps))
    raise typer.Exit(1 if steps.steps else 0)
