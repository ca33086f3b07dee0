"""The process's entry point: `python -m compat` and the `compat` command."""

from __future__ import annotations

import gc
import sys

ONLY: str | None = None
"""The command this process runs when the command line names it first (`compat explain ...`): compat.cli then
registers only that command's module. None (the default, and in a library or a test): every command."""


def main() -> None:
    global ONLY
    args = sys.argv[1:]
    ONLY = args[0] if args and not args[0].startswith("-") else None
    if ONLY == "explain":
        # Start-up (imports, the compiled catalog read back, the automaton loaded) makes tens of thousands of objects
        # and no garbage worth collecting: the collector's ~70 passes over them cost about 20 ms of a pasted log's
        # 0.2 s. compat.cli._explain turns it back on, those objects frozen, before the log's first block is read.
        gc.disable()
    from compat.cli import run

    run()
