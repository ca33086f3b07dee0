"""How facts fit a catalog entry's `when` clause: matched with evidence, not matched, or unknown.

compat/judge/conditions.py decides it (`evaluate`); the record lives here so that the records which
carry it (explain's matches) and their renderers need no deciding code.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(str, enum.Enum):
    """Whether the clause holds for the facts."""

    MATCH = "match"
    NO_MATCH = "no-match"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The outcome of one `when` clause against one set of facts, and why."""

    outcome: Outcome
    """Matched, not matched, or undecided for lack of a fact."""
    evidence: tuple[str, ...] = ()
    """Each condition that held, as a fact a person can check ("vllm 0.7.1 (<0.7.2)")."""
    missing: tuple[str, ...] = ()
    """Why a condition could not be decided."""
    failed: str = ""
    """The first condition that did not hold."""

    @property
    def matched(self) -> bool:
        """Every condition held."""
        return self.outcome is Outcome.MATCH
