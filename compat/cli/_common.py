"""Options shared by several commands, and the one path from options to Facts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from compat.errors import UsageError

MatrixOpt = Annotated[
    Optional[list[Path]],
    typer.Option("--matrix", envvar="COMPAT_MATRIX", help="Extra matrix directory laid over the shipped one (repeatable; also COMPAT_MATRIX)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
PythonOpt = Annotated[Optional[Path], typer.Option("--python", help="Inspect another interpreter (a virtual environment's python).")]
FactsOpt = Annotated[Optional[Path], typer.Option("--facts", help="Read a saved `compat facts` snapshot instead of probing.")]
GpusOpt = Annotated[Optional[str], typer.Option("--gpus", help="Declare the GPUs: 8xH100, 2xA100-80GB, 1xRTX5090, cpu.")]
DriverOpt = Annotated[Optional[str], typer.Option("--driver", help="Declare the NVIDIA driver version (550.54.15).")]
LauncherOpt = Annotated[Optional[str], typer.Option("--launcher", help="How training starts: python, torchrun, accelerate, deepspeed.")]
AccelerateOpt = Annotated[Optional[Path], typer.Option("--accelerate-config", help="accelerate config file (default: the one under the Hugging Face home).")]
RequirementsOpt = Annotated[Optional[Path], typer.Option("--requirements", "-r", help="Judge the pinned set in a requirements file instead of the installed packages.")]
ScriptOpt = Annotated[Optional[Path], typer.Option("--script", help="Training script to read (never run) for the patterns the catalog knows.")]


def load_matrix_for(overlays: list[Path] | None):
    from compat.matrix import load_matrix

    return load_matrix(tuple(overlays or ()))


def gather(
    matrix,
    *,
    python: Path | None = None,
    facts: Path | None = None,
    gpus: str | None = None,
    driver: str | None = None,
    launcher: str | None = None,
    accelerate_config: Path | None = None,
    script: Path | None = None,
    requirements: Path | None = None,
):
    """Facts from a snapshot or a live probe, with declared values laid on top."""
    from compat.sources.declared import Declared, apply_declared
    from compat.model.facts import load_facts

    declared = Declared(gpus=gpus, driver=driver, launcher=launcher)
    if facts is not None and python is not None:
        raise UsageError("--facts and --python both name the environment; give one")
    if facts is not None:
        try:
            text = facts.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {facts}: {getattr(exc, 'strerror', None) or exc}") from exc
        base = load_facts(text, origin=str(facts))
        if script is not None or accelerate_config is not None:
            from compat.sources.probe import probe_launch_and_script

            base = probe_launch_and_script(base, accelerate_config=accelerate_config, script=script)
    else:
        from compat.sources.probe import ProbeRequest, probe

        base = probe(
            ProbeRequest(
                python=python,
                requirements=requirements,
                hardware=gpus is None,  # declared GPUs: never wait on nvidia-smi in a Docker build
                accelerate_config=accelerate_config,
                script=script,
            ),
            matrix,
        )
    return apply_declared(base, declared, matrix)
