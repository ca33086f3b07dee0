"""What doctor and explain report: findings with their evidence, cause and fix."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(str, enum.Enum):
    ERROR = "error"  # this environment will fail
    WARNING = "warning"  # at risk: fails under common conditions
    INFO = "info"  # worth knowing; nothing to fix

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Status(str, enum.Enum):
    FOUND = "found"  # the conditions hold for this environment
    CANNOT_CHECK = "cannot-check"  # a fact the check needs is unknown


@dataclass(frozen=True, kw_only=True)
class Fix:
    requires: tuple[str, ...] = ()
    """Requirement strings that clear the finding ("vllm>=0.7.2")."""
    advice: str = ""
    """What to do, for a person, when a version change alone is not the fix."""
    commands: tuple[str, ...] = ()
    """Commands that apply the fix to this environment ("pip install 'torch==2.6.0' --index-url ...")."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    id: str
    """Stable identifier ("torch-cuda-newer-than-driver", or a signature id)."""
    severity: Severity
    """How bad it is when it holds."""
    status: Status
    """FOUND, or CANNOT_CHECK with `unknown` saying what was missing."""
    title: str
    """One line."""
    cause: str
    """Why it happens, tailored to this environment where possible."""
    fix: Fix
    """How to clear it."""
    evidence: tuple[str, ...] = ()
    """The facts that made the check fire ("driver 470.82.01 supports CUDA <= 11.4")."""
    unknown: tuple[str, ...] = ()
    """Why the check could not be decided (CANNOT_CHECK only)."""
    refs: tuple[str, ...] = ()
    """Upstream issues, PRs or documents behind the check."""


def sort_findings(findings: list[Finding] | tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Found before cannot-check, worst first, then by id: a stable order for every renderer."""
    return tuple(
        sorted(findings, key=lambda f: (f.status is not Status.FOUND, -f.severity.rank, f.id, f.title))
    )
