"""The options several commands share, declared once: hardware, environment, output.

A command names the groups it offers with `@shared(command, HARDWARE, ENVIRONMENT, ...)` and takes one
`opts: Shared` parameter; the decorator adds the groups' options to the signature typer reads and gathers
their values into `Shared`, whose methods build the api request's parts. `--format`'s choices and help come
from the format table (compat.report.formats.FORMATS); `--json` is `--format json` wherever json is offered.
"""

from __future__ import annotations

import enum
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

# The groups and Shared are imported from here by the commands, with the options typer reads.
from compat.cli._shared import CONFIG as CONFIG
from compat.cli._shared import ENVIRONMENT as ENVIRONMENT
from compat.cli._shared import FORMAT as FORMAT
from compat.cli._shared import HARDWARE as HARDWARE
from compat.cli._shared import LINKS as LINKS
from compat.cli._shared import OUTPUT as OUTPUT
from compat.cli._shared import REQUIREMENTS as REQUIREMENTS
from compat.cli._shared import Shared as Shared
from compat.cli._shared import collect
from compat.report.formats import FORMATS

F = TypeVar("F", bound=Callable[..., Any])

GpusOpt = Annotated[str | None, typer.Option("--gpus", metavar="GPUS", help="Declare the GPUs: 8xH100, 2xA100-80GB, 1xRTX5090, cpu.")]
DriverOpt = Annotated[str | None, typer.Option("--driver", metavar="VERSION", help="Declare the NVIDIA driver version (550.54.15).")]
LauncherOpt = Annotated[str | None, typer.Option(
    "--launcher", metavar="LAUNCHER", help="How training starts: python, torchrun, accelerate, deepspeed, srun.",
)]
PythonOpt = Annotated[Path | None, typer.Option(
    "--python", metavar="PYTHON", help="Inspect this interpreter or environment directory (default: the activated venv or conda env).",
)]
FactsOpt = Annotated[Path | None, typer.Option("--facts", metavar="FILE", help="Read a saved `compat facts` snapshot instead of probing.")]
RequirementsOpt = Annotated[Path | None, typer.Option(
    "--requirements", "-r", metavar="FILE", help="Judge the pinned set in a requirements file instead of the installed packages.",
)]
HostOpt = Annotated[bool, typer.Option(
    "--host", help="With -r: read this machine's toolchain, launch variables and GPUs too (default: the file alone).",
)]
AccelerateOpt = Annotated[Path | None, typer.Option(
    "--accelerate-config", metavar="FILE", help="accelerate config file (default: the one under the Hugging Face home).",
)]
ScriptOpt = Annotated[Path | None, typer.Option(
    "--script", metavar="FILE", help="Training script to read (never run) for the patterns the catalog knows.",
)]
MatrixOpt = Annotated[list[Path] | None, typer.Option(
    "--matrix", envvar="COMPAT_MATRIX", metavar="DIR",
    help="Extra matrix directory laid over the shipped one (repeatable; also COMPAT_MATRIX).",
)]
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", metavar="FILE", help="Config file (compat.toml, or pyproject.toml with [tool.compat]); default: found upward from here.",
)]
NoConfigOpt = Annotated[bool, typer.Option("--no-config", help="Read no config file.")]
ReportUrlOpt = Annotated[str | None, typer.Option(
    "--report-url", metavar="URL",
    help="Base URL of the `compat matrix site` pages finding ids link to (also COMPAT_REPORT_URL, report-url).",
)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
JsonFormatOpt = Annotated[bool, typer.Option("--json", help="JSON output: the same as --format json.")]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", metavar="FILE", help="Write the output to this file (atomically) instead of standard output.",
)]

_OPTIONS: dict[str, tuple[Any, Any]] = {
    # parameter name: (the annotation typer reads, the default)
    "gpus": (GpusOpt, None), "driver": (DriverOpt, None), "launcher": (LauncherOpt, None),
    "python": (PythonOpt, None), "facts": (FactsOpt, None), "requirements": (RequirementsOpt, None), "host": (HostOpt, False),
    "accelerate_config": (AccelerateOpt, None), "script": (ScriptOpt, None), "matrix": (MatrixOpt, None),
    "config": (ConfigOpt, None), "no_config": (NoConfigOpt, False), "report_url": (ReportUrlOpt, None),
    "json_out": (JsonFormatOpt, False), "output": (OutputOpt, None),
}


def _format_option(command: str) -> tuple[Any, Any]:
    offer = FORMATS[command]
    # typer offers an Enum's values as the choices: one made from the table's names for this command.
    choices = enum.Enum(f"{command.title()}Format", {n: n for n in offer.names}, type=str)  # type: ignore[misc]
    option = typer.Option("--format", metavar="FORMAT", show_default=False, help=offer.help())
    return Annotated[choices | None, option], None


def shared(command: str | None, *groups: tuple[str, ...]) -> Callable[[F], F]:
    """Add the options of `groups` to the command and hand their values to it as `opts: Shared`.

    `command` names the command's row of the format table (for --format); None when it offers no format."""
    names = list(dict.fromkeys(n for g in groups for n in g))

    def decorate(func: F) -> F:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [p.replace(annotation=_annotated(hints.get(p.name, p.annotation)))
               for p in inspect.signature(func).parameters.values() if p.name != "opts"]
        added = []
        for name in names:
            annotation, default = _format_option(command) if name == "output_format" and command else _OPTIONS[name]
            added.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))

        @functools.wraps(func)
        def command_function(*args: Any, **kwargs: Any) -> Any:
            given = {n: kwargs.pop(n, None) for n in names}
            return func(*args, opts=collect(command, given), **kwargs)

        params = own + added
        command_function.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command_function.__annotations__ = {p.name: p.annotation for p in params}
        return command_function  # type: ignore[return-value]

    return decorate


def _annotated(hint: object) -> object:
    """`hint` without the Optional[...] that Python 3.10's get_type_hints wraps around a hint whose default is None
    (3.11 dropped it): typer reads an option's declaration from the Annotated inside, which the wrapper hides."""
    if typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and typing.get_origin(args[0]) is typing.Annotated:
            return args[0]
    return hint

