"""A fact that could not be read is a value that carries its reason, never a bare None."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Unknown:
    """A fact compat could not establish."""

    reason: str
    """Why it is unknown, phrased for a person ("nvidia-smi timed out after 5 s")."""

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


def is_known(value: object) -> bool:
    return not isinstance(value, Unknown)
