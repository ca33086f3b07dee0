"""Whether a version (or a number) read from any input is one compat can compare.

packaging's Version turns every release number into an int, and Python 3.11+ refuses to turn a
string of more than 4,300 digits into one (ValueError, not InvalidVersion): a 5,000-digit number
in a facts file, a requirements line or a log would end in a traceback. Every reader asks here
first; a real release number fits in 64 bits, so a run of 19 digits or more is no version.
Standard library only: a leaf any layer may import.
"""

from __future__ import annotations

import re

MAX_VERSION = 256
"""Characters a version text may have (the longest real ones, local tags included, are under 64)."""
_HUGE = re.compile(r"\d{19,}")


def unreadable_version(text: str) -> bool:
    """True when `text` holds a number no version has, or is longer than any version."""
    return len(text) > MAX_VERSION or _HUGE.search(text) is not None


def huge_number(text: str) -> bool:
    """True when `text` holds a run of digits longer than any version or count compat reads."""
    return _HUGE.search(text) is not None


def short(text: str, limit: int = 40) -> str:
    """`text` quoted for a message, cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "…")
