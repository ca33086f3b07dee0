"""Text from inputs made safe for the medium it is printed in: a terminal, one line, XML.

Package names, facts files, config reasons, overlay titles and log lines are inputs. An escape
sequence in one would drive the terminal; a newline in one would start a line of its own, which
breaks a markdown table and, at a line start in a CI log, forges a GitHub workflow command
(`::error ...`, `::add-mask::`); a control character makes JUnit XML unreadable; a bidirectional
override or isolate (U+202A-U+202E, U+2066-U+2069, the "Trojan Source" characters) makes the
terminal show the rest of the line reversed, so `trl\u202e1.0==` reads as another name and version. The renderers
pass every value that came from outside through these functions; the command line's streams pass
everything through `terminal_safe` once more.

A leaf module (standard library only) like compat.redact: the renderers in compat.report and the
command line's streams both use it.
"""

from __future__ import annotations

import re
from functools import cache

_BIDI = "\u202a-\u202e\u2066-\u2069"
"""Embeddings, overrides and isolates; the marks (U+200E, U+200F) reorder nothing past a neighbour and stay."""
_ANY_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_LINE_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x85\u2028\u2029]+")


# The next two are compiled when first needed (a text holding a control character; JUnit XML): `_not_xml`'s class of
# every non-BMP character alone costs about 9 ms, a twentieth of `compat explain`'s start-up.
@cache
def _unsafe() -> re.Pattern[str]:
    return re.compile(
        r"(?P<sgr>\x1b\[[0-9;:]*m)"  # Select Graphic Rendition: colours, the only codes the renderer writes
        r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)"  # OSC, DCS, SOS, PM, APC to their end
        r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erase, modes
        r"|\x1b[ -/]*[0-~]?"  # other ESC sequences, and a lone ESC
        r"|[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 controls but tab and newline (a carriage return overwrites a line), DEL, C1
        f"{_BIDI}]"  # bidirectional embeddings, overrides and isolates
    )


@cache
def _not_xml() -> re.Pattern[str]:
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def terminal_safe(text: str, *, keep_colour: bool = False) -> str:
    """`text` without control sequences, control characters or bidirectional overrides; SGR colour codes kept
    on request."""
    if not _ANY_CONTROL.search(text):
        return text
    return _unsafe().sub(lambda m: m.group() if keep_colour and m.group("sgr") else "", text)


def one_line(text: str) -> str:
    """`text` as one line: control sequences removed, every run of line breaks and tabs one blank.

    What a value says survives; what it could do at a line start (a workflow command, a table
    row, a heading) does not, because it no longer starts a line.
    """
    return _LINE_BREAKS.sub(" ", terminal_safe(text))


def xml_safe(text: str) -> str:
    """`text` with nothing XML 1.0 forbids (C0 controls, lone surrogates, U+FFFE/U+FFFF); lines kept."""
    return _not_xml().sub("", terminal_safe(text))
