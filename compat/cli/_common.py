"""What the commands share besides their options (compat.cli.options): settings, the terminal, search progress."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

    from compat.api import Settings
    from compat.sources.terminal import TerminalStyle
MAX_SECONDS = 7 * 86400.0
"""The longest time bound any option takes (a week): a larger one (inf, 1e309) is a typo, and torch's timedelta
overflows on some; without it `compat smoke --budget inf` ran with no bound at all."""
MAX_PROCESSES = 4096
"""The most processes a launched run may be asked for: a larger count is a typo, never a job on one node."""


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
