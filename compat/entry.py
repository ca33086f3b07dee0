"""The process's entry point: `python -m compat` and the `compat` command."""

from __future__ import annotations

import sys

ONLY: str | None = None
"""The command this process runs when the command line names it first (`compat explain ...`): compat.cli then
registers only that command's module. None (the default, and in a library or a test): every command."""


def main() -> None:
    global ONLY
    args = sys.argv[1:]
    ONLY = args[0] if args and not args[0].startswith("-") else None
    from compat.cli import run

    run()
