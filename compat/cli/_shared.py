"""The values of the options several commands share, without the command line's parser: `Shared` and the groups
of options a command offers. compat.cli.options declares them to typer; a process that runs `compat explain` on
plain arguments builds them from its command line without typer (compat.cli._fast_explain)."""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from compat.report.formats import FORMATS, Presentation

if TYPE_CHECKING:
    from compat.api import Declared, Environment

R = TypeVar("R")

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


def collect(command: str | None, given: dict[str, Any]) -> Shared:
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
