"""Options shared by several commands, and the one translation from them to an api request's parts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from compat.api import Declared, Environment, Settings

MatrixOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--matrix", envvar="COMPAT_MATRIX",
        help="Extra matrix directory laid over the shipped one (repeatable; also COMPAT_MATRIX).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
PythonOpt = Annotated[Path | None, typer.Option(
    "--python", help="Inspect this interpreter or environment directory (default: the activated venv or conda env).",
)]
FactsOpt = Annotated[Path | None, typer.Option("--facts", help="Read a saved `compat facts` snapshot instead of probing.")]
GpusOpt = Annotated[str | None, typer.Option("--gpus", help="Declare the GPUs: 8xH100, 2xA100-80GB, 1xRTX5090, cpu.")]
DriverOpt = Annotated[str | None, typer.Option("--driver", help="Declare the NVIDIA driver version (550.54.15).")]
LauncherOpt = Annotated[str | None, typer.Option("--launcher", help="How training starts: python, torchrun, accelerate, deepspeed, srun.")]
AccelerateOpt = Annotated[Path | None, typer.Option(
    "--accelerate-config", help="accelerate config file (default: the one under the Hugging Face home).",
)]
RequirementsOpt = Annotated[Path | None, typer.Option(
    "--requirements", "-r", help="Judge the pinned set in a requirements file instead of the installed packages.",
)]
ScriptOpt = Annotated[Path | None, typer.Option("--script", help="Training script to read (never run) for the patterns the catalog knows.")]


def environment(
    *,
    python: Path | None = None,
    facts: Path | None = None,
    requirements: Path | None = None,
    accelerate_config: Path | None = None,
    script: Path | None = None,
) -> Environment:
    from compat.api import Environment

    return Environment(facts_file=facts, python=python, requirements=requirements, accelerate_config=accelerate_config, script=script)


def declared(*, gpus: str | None, driver: str | None, launcher: str | None) -> Declared:
    from compat.api import Declared

    return Declared(gpus=gpus, driver=driver, launcher=launcher)


def settings() -> Settings:
    """compat's environment variables (COMPAT_CACHE_DIR, COMPAT_NO_CACHE, XDG_CACHE_HOME, PIP_INDEX_URL)."""
    from compat.api import read_settings

    return read_settings()


def overlays(matrix: list[Path] | None) -> tuple[Path, ...]:
    return tuple(matrix or ())
