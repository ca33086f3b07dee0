"""`compat explain` on plain arguments, read without typer: typer's import and the building of the command's
options cost about as much as a pasted log's whole matching (issue 25).

Only what typer would read the same way is read here: flags, options with a value as the next argument or after
`=`, one LOG. Anything else (--help, an unknown or repeated option, a value that looks like an option, an empty or
out-of-range value, a path typer would refuse, `--`, COMPAT_MATRIX or shell completion in the environment) returns
None, and typer parses the whole command line as before, with its own messages. The run itself is
compat.cli._explain's, the one typer's command calls.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

FLAGS = {"--no-env": "no_env", "--json": "json_out", "--offline": "offline", "--no-config": "no_config"}
"""The flags read here, and the parameter each sets."""

VALUES = {
    "--top": "top", "--format": "output_format", "--output": "output", "-o": "output", "--index-url": "index_url",
    "--index-budget": "index_budget", "--config": "config", "--facts": "facts", "--python": "python",
    "--accelerate-config": "accelerate_config", "--script": "script", "--report-url": "report_url", "--gpus": "gpus",
    "--driver": "driver", "--launcher": "launcher",
}
"""The options with a value read here (every one of `compat explain`'s but --matrix, a list typer also reads from
COMPAT_MATRIX), and the parameter each sets."""

PATHS = frozenset({"output", "config", "facts", "python", "accelerate_config", "script"})
"""The parameters typer makes a Path of."""

_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


class _Typer(Exception):
    """The command line needs typer's parser (to read it, or to say what is wrong with it)."""


def run_plain(args: list[str]) -> int | None:
    """Run `compat explain ARGS` when typer would read ARGS as this module does: the exit code; else None."""
    from compat.sources.settings import parser_variables_set

    if parser_variables_set():
        return None
    try:
        given = parse(args)
    except _Typer:
        return None
    from compat.cli._explain import GROUPS, explain_log
    from compat.cli._shared import collect

    own = {name: given.pop(name, default) for name, default in (
        ("log", "-"), ("top", None), ("no_env", False), ("offline", False), ("index_url", None), ("index_budget", None),
    )}
    shared = {name: given.get(name) for group in GROUPS for name in group}
    shared["json_out"] = given.get("json_out", False)
    shared["no_config"] = given.get("no_config", False)
    opts = collect("explain", shared)
    return explain_log(opts, own.pop("log"), **own)


def parse(args: list[str]) -> dict[str, Any]:
    """The parameters ARGS set, as typer would give them; raises _Typer where typer must read them."""
    given: dict[str, Any] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, value = _option(arg, rest)
        if name in given:
            raise _Typer  # typer keeps the last; its message or choice is typer's to make
        given[name] = value
    return given


def _option(arg: str, rest: list[str]) -> tuple[str, Any]:
    """The parameter `arg` (and the value it takes from `rest`) sets."""
    if arg == "-" or (arg and not arg.startswith("-")):
        return "log", arg
    flag, eq, attached = arg.partition("=")
    if arg in FLAGS:
        return FLAGS[arg], True
    if flag not in VALUES or (eq and flag == "-o"):
        raise _Typer
    if eq:
        value = attached
    elif rest:
        value = rest.pop(0)
    else:
        raise _Typer
    if not value or value.startswith("-"):
        raise _Typer
    name = VALUES[flag]
    return name, _value(name, value)


def _value(name: str, value: str) -> Any:
    if name in PATHS:
        return _path(value)
    if name == "top":
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise _Typer
        return int(value)
    if name == "index_budget":
        if not _NUMBER.fullmatch(value) or not 0 <= float(value) <= 600:
            raise _Typer
        return float(value)
    if name == "output_format":
        from compat.report.formats import FORMATS

        if value not in FORMATS["explain"].names:
            raise _Typer
    return value


def _path(value: str) -> Path:
    """Path(value), where typer's check of a path given to an option (readable, when it exists) passes."""
    try:
        os.stat(value)
    except (OSError, ValueError):
        return Path(value)
    if not os.access(value, os.R_OK):
        raise _Typer
    return Path(value)
