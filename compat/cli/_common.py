"""Options shared by several commands, and the one translation from them to an api request's parts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from compat.report.formats import DoctorFormat

if TYPE_CHECKING:
    from typing import TextIO

    from compat.api import Declared, Environment, Settings
    from compat.sources.terminal import TerminalStyle

MatrixOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--matrix", envvar="COMPAT_MATRIX", metavar="DIR",
        help="Extra matrix directory laid over the shipped one (repeatable; also COMPAT_MATRIX).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
PythonOpt = Annotated[Path | None, typer.Option(
    "--python", metavar="PYTHON", help="Inspect this interpreter or environment directory (default: the activated venv or conda env).",
)]
FactsOpt = Annotated[Path | None, typer.Option("--facts", metavar="FILE", help="Read a saved `compat facts` snapshot instead of probing.")]
GpusOpt = Annotated[str | None, typer.Option("--gpus", metavar="GPUS", help="Declare the GPUs: 8xH100, 2xA100-80GB, 1xRTX5090, cpu.")]
DriverOpt = Annotated[str | None, typer.Option("--driver", metavar="VERSION", help="Declare the NVIDIA driver version (550.54.15).")]
LauncherOpt = Annotated[str | None, typer.Option(
    "--launcher", metavar="LAUNCHER", help="How training starts: python, torchrun, accelerate, deepspeed, srun.",
)]
AccelerateOpt = Annotated[Path | None, typer.Option(
    "--accelerate-config", metavar="FILE", help="accelerate config file (default: the one under the Hugging Face home).",
)]
RequirementsOpt = Annotated[Path | None, typer.Option(
    "--requirements", "-r", metavar="FILE", help="Judge the pinned set in a requirements file instead of the installed packages.",
)]
HostOpt = Annotated[bool, typer.Option(
    "--host", help="With -r: read this machine's toolchain, launch variables and GPUs too (default: the file alone).",
)]
FormatOpt = Annotated[DoctorFormat | None, typer.Option(
    "--format", show_default=False,
    help="Output format: text (default), json (as --json), markdown (a GitHub issue block), github (workflow "
         "annotations), sarif (code scanning), junit (test reports).",
)]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", metavar="FILE", help="Config file (compat.toml, or pyproject.toml with [tool.compat]); default: found upward from here.",
)]
NoConfigOpt = Annotated[bool, typer.Option("--no-config", help="Read no config file.")]
ReportUrlOpt = Annotated[str | None, typer.Option(
    "--report-url", metavar="URL",
    help="Base URL of the `compat matrix site` pages finding ids link to (also COMPAT_REPORT_URL, report-url).",
)]
ScriptOpt = Annotated[Path | None, typer.Option(
    "--script", metavar="FILE", help="Training script to read (never run) for the patterns the catalog knows.",
)]


def environment(
    *,
    python: Path | None = None,
    facts: Path | None = None,
    requirements: Path | None = None,
    accelerate_config: Path | None = None,
    script: Path | None = None,
    host: bool = False,
) -> Environment:
    from compat.api import Environment

    return Environment(facts_file=facts, python=python, requirements=requirements, accelerate_config=accelerate_config, script=script,
                       host=host)


def declared(*, gpus: str | None, driver: str | None, launcher: str | None) -> Declared:
    from compat.api import Declared

    return Declared(gpus=gpus, driver=driver, launcher=launcher)


def settings() -> Settings:
    """compat's environment variables (COMPAT_CACHE_DIR, COMPAT_NO_CACHE, XDG_CACHE_HOME, PIP_INDEX_URL)."""
    from compat.api import read_settings

    return read_settings()


def overlays(matrix: list[Path] | None) -> tuple[Path, ...]:
    return tuple(matrix or ())


def terminal(stream: TextIO, *, default_width: int | None = None) -> TerminalStyle:
    """Colour and width for a renderer writing to `stream` (NO_COLOR, FORCE_COLOR, COLUMNS, the terminal);
    `default_width` when it is not a terminal and COLUMNS is unset."""
    from compat.sources.terminal import DEFAULT_WIDTH, terminal_style

    return terminal_style(stream, default=default_width or DEFAULT_WIDTH)


@contextmanager
def search_progress() -> Iterator[Callable[[int, float], None] | None]:
    """One status line on stderr while a lock or plan searches past a second, when stderr is a terminal (never in
    a pipe or a log); erased when the search ends."""
    if not sys.stderr.isatty():
        yield None
        return
    shown = [False]

    def show(rounds: int, seconds: float) -> None:
        if seconds >= 1.0:
            sys.stderr.write(f"\rcompat: searching for a compatible set: {rounds} rounds, {seconds:.0f} s\x1b[K")
            sys.stderr.flush()
            shown[0] = True

    try:
        yield show
    finally:
        if shown[0]:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
