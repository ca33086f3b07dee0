"""How output should look on the stream it goes to: colour (NO_COLOR, FORCE_COLOR, a terminal) and width.

NO_COLOR (https://no-color.org) wins over FORCE_COLOR; either counts when set to anything but the
empty string ("0" included, as no-color.org says for NO_COLOR; FORCE_COLOR=0 is read as "off", as
Node and rich read it). The width is the terminal's (COLUMNS overrides it), and 100 columns when
the output is not a terminal and COLUMNS is unset, so logs and golden files do not depend on who ran them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

DEFAULT_WIDTH = 100
_MIN_WIDTH = 40


@dataclass(frozen=True, kw_only=True)
class TerminalStyle:
    color: bool
    """Write ANSI colours."""
    width: int
    """Columns to lay the text out in."""
    sized: bool = False
    """The width is the terminal's or COLUMNS, not the default for a pipe or a file."""


def terminal_style(stream: TextIO, environ: Mapping[str, str] | None = None, *, default: int = DEFAULT_WIDTH) -> TerminalStyle:
    """`default`: the width when the stream is not a terminal and COLUMNS is unset."""
    env = os.environ if environ is None else environ
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if env.get("NO_COLOR", ""):
        color = False
    elif env.get("FORCE_COLOR", ""):
        color = env["FORCE_COLOR"].strip().lower() not in {"0", "false", "no", "off"}
    else:
        color = tty and env.get("TERM", "") != "dumb"
    columns = env.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    elif tty:
        # The size of this stream's terminal: shutil asks standard output's, which is a file or a
        # pipe when only standard error (a progress bar) is the terminal.
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    else:
        width = default
    return TerminalStyle(color=color, width=max(width, _MIN_WIDTH), sized=tty or (columns.isdigit() and int(columns) > 0))
