"""Which installer a command is written for: a plan's steps, a stated version's fix, a check's advice.

Its own module, apart from the lock records (`compat.model.lock` re-exports it): explain writes pip
commands too, and a pasted log's start-up should not create the dozen lock and plan records it never uses.
"""

from __future__ import annotations

import enum


class Installer(str, enum.Enum):
    """Which installer a plan's commands are written for."""

    PIP = "pip"
    UV = "uv"
