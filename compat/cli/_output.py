"""What reaches the terminal: no control sequence from an input, no secret.

Log lines, package names, facts files and tool output are inputs: an OSC sequence in one of them
would set the terminal's title or write its clipboard, a lone carriage return would overwrite a
line. Every write of the command line goes through `SafeStream`, which removes escape sequences
and control characters (keeping only the colour codes compat's renderer writes to a terminal) and
masks credentials and tokens (compat.redact).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from compat.errors import CompatError
from compat.printable import terminal_safe
from compat.redact import redact_text


class OutputError(CompatError):
    """Standard output (or error) cannot take what compat writes: a full disk, /dev/full, EIO."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot write the output: {exc.strerror or exc}")


class SafeStream:
    """A text stream that writes `terminal_safe(redact_text(s))` to the stream it wraps."""

    def __init__(self, stream: TextIO, *, colour: bool) -> None:
        self._stream = stream
        # Colours pass where the renderer was told to write them (a terminal, or FORCE_COLOR).
        self._colour = colour
        self._gone = False
        # A stream that cannot encode every character (PYTHONIOENCODING=ascii, a cp1252 or latin-1 console) gets '?'
        # for '·' or '✗' instead of a UnicodeEncodeError in the middle of a report; "replace" keeps JSON valid.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (getattr(stream, "encoding", None) or "").lower().replace("-", "") != "utf8":
            try:
                reconfigure(errors="replace")
            except (OSError, ValueError):
                pass

    def write(self, text: str) -> int:
        if self._gone:
            return len(text)
        try:
            self._stream.write(terminal_safe(redact_text(text), keep_colour=self._colour))
        except BrokenPipeError:
            self._leave()
        except OSError as exc:
            raise OutputError(exc) from exc
        return len(text)

    def flush(self) -> None:
        if self._gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._leave()
        except OSError as exc:
            raise OutputError(exc) from exc

    def _leave(self) -> None:
        """The reader left (`compat ... | head -1`): the rest is dropped and the command ends with its
        own exit code, without a word (click would turn the broken pipe into exit 1, a verdict)."""
        self._gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def open_closed_standard_streams() -> None:
    """A standard stream the caller closed (`compat doctor >&-`, `<&-`) becomes the null device.

    Python leaves sys.stdout None then, and every print was an AttributeError (exit 3); worse, the
    next file compat opened would take descriptor 1 and get the report. A closed output is treated
    as a reader that left (the output is dropped, the exit code is the verdict); a closed input is
    an empty one.
    """
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, open(fd, mode, encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115


def write_file(path: Path, text: str) -> Path:
    """Write what a command would print to the file `-o` names (compat.atomic.write_output), secrets
    masked and control sequences removed as on standard output; returns the file written; raises OSError."""
    from compat.atomic import write_output

    return write_output(path, terminal_safe(redact_text(text)).encode("utf-8"))
