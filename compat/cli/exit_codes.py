"""The exit codes, and what each command's code means: the one source for the codes the CLI returns,
the "Exit code:" line of every `--help`, and the tables in the README and docs (a test holds them to
this module, so a changed code cannot leave a stale sentence behind)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import IntEnum
from typing import TypeVar


class ExitCode(IntEnum):
    OK = 0
    """The command's good verdict: clean, locked, nothing to change, a known failure matched."""
    VERDICT = 1
    """The command's other verdict: findings, no compatible set (lock), steps to run (plan), nothing known."""
    USAGE = 2
    """A usage or data error, one line on stderr."""
    INTERNAL_ERROR = 3
    """compat itself failed (a bug); never a verdict, so a gate cannot read a crash as one."""
    NO_COMPATIBLE_SET = 4
    """`compat plan` found no compatible set: 1 there already means steps to run, and 3 is a bug."""
    INTERRUPTED = 130
    """Ctrl-C, as a shell reports a SIGINT."""


USAGE_MEANING = "usage or data error"
INTERNAL_MEANING = "a bug in compat"

COMMAND_EXITS: dict[str, tuple[tuple[ExitCode, str], ...]] = {
    "doctor": ((ExitCode.OK, "clean"), (ExitCode.VERDICT, "findings at or above --fail-on")),
    "explain": ((ExitCode.OK, "a known failure matched"), (ExitCode.VERDICT, "nothing known")),
    "lock": ((ExitCode.OK, "locked"), (ExitCode.VERDICT, "no compatible set (the conflict is explained on stderr)")),
    "plan": (
        (ExitCode.OK, "nothing to change"), (ExitCode.VERDICT, "steps to run"), (ExitCode.NO_COMPATIBLE_SET, "no compatible set"),
    ),
    "fleet": ((ExitCode.OK, "clean"), (ExitCode.VERDICT, "differences, findings or silent nodes at or above --fail-on")),
    "facts": ((ExitCode.OK, "written"),),
    "report": ((ExitCode.OK, "written, whatever it finds"),),
    "matrix": ((ExitCode.OK, "done"),),
}
"""Each command's verdicts; every command also exits 2 for a usage or data error and 3 for a bug."""


def codes(command: str) -> tuple[int, ...]:
    """Every code COMMAND can exit with, ascending (130, an interrupt, aside)."""
    verdicts = {int(code) for code, _ in COMMAND_EXITS[command]}
    return tuple(sorted(verdicts | {ExitCode.USAGE, ExitCode.INTERNAL_ERROR}))


def exit_code_help(command: str) -> str:
    """The "Exit code: ..." sentence of COMMAND's --help."""
    parts = [f"{int(code)} {meaning}" for code, meaning in COMMAND_EXITS[command]]
    parts.append(f"{int(ExitCode.USAGE)} {USAGE_MEANING}")
    parts.append(f"{int(ExitCode.INTERNAL_ERROR)} {INTERNAL_MEANING}")
    ordered = sorted(parts, key=lambda part: int(part.split(" ", 1)[0]))
    return "Exit code: " + ", ".join(ordered) + "."


F = TypeVar("F", bound=Callable[..., object])


def documents_exits(command: str) -> Callable[[F], F]:
    """Append COMMAND's exit-code sentence to the function's docstring, which typer shows as --help.

    Applied below `@app.command()`, so the help is complete when typer reads it."""

    def decorate(func: F) -> F:
        doc = inspect.cleandoc(func.__doc__ or "")
        func.__doc__ = f"{doc}\n\n{exit_code_help(command)}\n" if doc else exit_code_help(command)
        return func

    return decorate
