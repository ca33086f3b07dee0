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


class Consequence(str, enum.Enum):
    """What happens to the program, the order doctor reports findings in (worst first)."""

    BROKEN_BUILD = "broken-build"  # a compiled part does not match: undefined symbol, no kernel image, driver too old
    WONT_START = "wont-start"  # an import or the launch fails before training starts
    FAILS_LATER = "fails-later"  # it starts, then fails (a code path, a later step, a save)
    RISK = "risk"  # fails only under some conditions, or runs slower or worse

    @property
    def rank(self) -> int:
        return list(Consequence).index(self)

    @classmethod
    def of_severity(cls, severity: Severity) -> Consequence:
        """The consequence a finding has when nobody said: errors fail later, the rest are risks."""
        return cls.FAILS_LATER if severity is Severity.ERROR else cls.RISK


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


class EvidenceKind(str, enum.Enum):
    """Where a piece of evidence comes from: what a reader may check it against."""

    OBSERVED = "observed"  # read from this environment: a version, a GPU, a variable, a file, a release's metadata
    DECLARED = "declared"  # given on the command line or in a facts file (--gpus, --driver), not read from the host
    CURATED = "curated"  # compat's curated data (matrix/*.toml): a build table, a wheel table, a driver table
    MATCHED = "matched"  # a fact that met a condition of the catalog entry's `when` clause, with the range it met


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One fact behind a finding."""

    kind: EvidenceKind
    """Where it comes from (observed, declared, curated, matched)."""
    text: str
    """The fact, for a person ("driver 470.82.01 supports CUDA <= 11.4")."""
    source: str = ""
    """Where it was read when the text does not say: a file, a URL, a release's metadata; empty when none."""
    line: int | None = None
    """The 1-based line in `source` it was read from, where one is known."""

    @property
    def where(self) -> str:
        """`source`, with `:line` when the line is known; empty when there is no source."""
        if not self.source:
            return ""
        return f"{self.source}:{self.line}" if self.line is not None else self.source


def observed(text: str, *, declared: bool = False, source: str = "", line: int | None = None) -> Evidence:
    """Evidence read from this environment, or DECLARED when the fact was given rather than read."""
    return Evidence(kind=EvidenceKind.DECLARED if declared else EvidenceKind.OBSERVED, text=text, source=source, line=line)


def curated(text: str, *, source: str = "") -> Evidence:
    """Evidence from compat's curated data; `source` names the table or the upstream page it was curated from."""
    return Evidence(kind=EvidenceKind.CURATED, text=text, source=source)


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
    evidence: tuple[Evidence, ...] = ()
    """The facts that made the check fire, each with where it comes from."""
    unknown: tuple[str, ...] = ()
    """Why the check could not be decided (CANNOT_CHECK only)."""
    refs: tuple[str, ...] = ()
    """Upstream issues, PRs or documents behind the check."""
    consequence: Consequence | None = None
    """What it does to the program; None: what its severity implies (`Consequence.of_severity`)."""
    see: tuple[str, ...] = ()
    """Ids of catalog entries for the failure this leads to (the log line `compat explain` knows it by)."""

    @property
    def effect(self) -> Consequence:
        return self.consequence or Consequence.of_severity(self.severity)


def sort_findings(findings: list[Finding] | tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Found before cannot-check, then by consequence (a broken build before a failed import before
    a later failure before a risk), then by severity and id: a stable order for every renderer."""
    return tuple(
        sorted(findings, key=lambda f: (f.status is not Status.FOUND, f.effect.rank, -f.severity.rank, f.id, f.title))
    )
