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
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from compat.report.formats import FORMATS, Presentation

if TYPE_CHECKING:
    from compat.api import Declared, Environment

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

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

HARDWARE = ("gpus", "driver", "launcher")
"""What the machine is declared to be, where it cannot be probed (a login node, a laptop)."""
ENVIRONMENT = ("python", "facts", "accelerate_config", "script", "matrix")
"""Which environment is judged, against which curated data."""
CONFIG = ("config", "no_config")
"""Which config file applies."""
REQUIREMENTS = ("requirements", "host")
"""Judge a requirements file instead of what is installed (doctor)."""
LINKS = ("report_url",)
"""Where finding ids link to."""
OUTPUT = ("output_format", "json_out", "output")
"""How and where the result is written: --format (from the format table), --json, -o."""
FORMAT = ("output_format", "json_out")
"""--format and --json alone (a command whose -o means more than a file to write)."""


@dataclass(frozen=True, kw_only=True)
class Shared:
    """The values of a command's shared options (the defaults for those it does not offer)."""

    gpus: str | None = None
    """--gpus"""
    driver: str | None = None
    """--driver"""
    launcher: str | None = None
    """--launcher"""
    python: Path | None = None
    """--python"""
    facts: Path | None = None
    """--facts"""
    requirements: Path | None = None
    """-r/--requirements"""
    host: bool = False
    """--host"""
    accelerate_config: Path | None = None
    """--accelerate-config"""
    script: Path | None = None
    """--script"""
    matrix: tuple[Path, ...] = ()
    """--matrix, in the order given."""
    config: Path | None = None
    """--config"""
    no_config: bool = False
    """--no-config"""
    report_url: str | None = None
    """--report-url"""
    format: str = "text"
    """The format to write: --format, else `json` for --json, else the command's default."""
    output: Path | None = None
    """-o/--output; None: standard output."""

    find_config: bool = False
    """Look for a config file upward: the command offers --config/--no-config and --no-config was not given."""

    def request(self, kind: Callable[..., R], **fields: Any) -> R:
        """The api request `kind` (a FactsRequest) with the environment, declared hardware, overlays, settings and
        config these options name, and the command's own `fields`."""
        from compat.cli._common import settings

        return kind(environment=self.environment(), declared=self.declared(), matrix=self.matrix, settings=settings(),
                    config=self.config, find_config=self.find_config, **fields)

    def environment(self) -> Environment:
        from compat.api import Environment

        return Environment(facts_file=self.facts, python=self.python, requirements=self.requirements,
                           accelerate_config=self.accelerate_config, script=self.script, host=self.host)

    def declared(self) -> Declared:
        from compat.api import Declared

        return Declared(gpus=self.gpus, driver=self.driver, launcher=self.launcher)

    def presentation(self, *, top: int | None = None, report_url: str | None = None, artifact: str | None = None) -> Presentation:
        """Colour and width of standard output (NO_COLOR, FORCE_COLOR, COLUMNS, the terminal); plain for a file."""
        from compat.cli._common import terminal

        style = terminal(sys.stdout)
        if self.output is not None:
            return Presentation(top=top, report_url=report_url, artifact=artifact)
        return Presentation(color=style.color, width=style.width, sized=style.sized, top=top, report_url=report_url,
                            artifact=artifact)

    def emit(self, text: str) -> None:
        """Write `text` to standard output or to the -o file (secrets masked, control sequences removed)."""
        if self.output is None:
            sys.stdout.write(text)
            return
        from compat.cli._output import write_file
        from compat.errors import UsageError

        try:
            write_file(self.output, text)
        except OSError as exc:
            raise UsageError(f"cannot write {self.output}: {exc.strerror or exc}") from exc


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
            return func(*args, opts=_collect(command, given), **kwargs)

        params = own + added
        command_function.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command_function.__annotations__ = {p.name: p.annotation for p in params}
        return command_function  # type: ignore[return-value]

    return decorate


def _collect(command: str | None, given: dict[str, Any]) -> Shared:
    from compat.errors import UsageError

    chosen = given.pop("output_format", None)
    json_out = bool(given.pop("json_out", False))
    fmt = chosen.value if isinstance(chosen, enum.Enum) else chosen
    if json_out and fmt not in (None, "json"):
        raise UsageError("--json and --format name different formats; give one")
    default = FORMATS[command].default if command else "text"
    values = {k: v for k, v in given.items() if v is not None}
    values["matrix"] = tuple(values.get("matrix") or ())
    values["find_config"] = "no_config" in given and not given["no_config"]
    return Shared(**values, format="json" if json_out else (fmt or default))


def _annotated(hint: object) -> object:
    """`hint` without the Optional[...] that Python 3.10's get_type_hints wraps around a hint whose default is None
    (3.11 dropped it): typer reads an option's declaration from the Annotated inside, which the wrapper hides."""
    if typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and typing.get_origin(args[0]) is typing.Annotated:
            return args[0]
    return hint

