"""What a project declares about itself in `[tool.compat]` (pyproject.toml) or compat.toml."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from compat.model.findings import Finding, Severity


@dataclass(frozen=True, kw_only=True)
class Ignore:
    """An accepted finding: doctor reports it as ignored instead of failing on it."""

    id: str
    """The finding id ("nccl-p2p-hang-pcie")."""
    reason: str
    """Why the risk is accepted; required, so the decision is written down."""
    until: date | None = None
    """Last day the ignore applies; after it the finding counts again. None: no expiry."""

    def expired(self, today: date) -> bool:
        return self.until is not None and today > self.until


@dataclass(frozen=True, kw_only=True)
class Config:
    """The project's compat settings; every field is optional."""

    path: str
    """The file they were read from."""
    gpus: str | None = None
    """Declared GPUs ("8xH100"), as `--gpus` takes them."""
    driver: str | None = None
    """Declared NVIDIA driver version, as `--driver` takes it."""
    launcher: str | None = None
    """Declared launcher, as `--launcher` takes it."""
    fail_on: Severity | None = None
    """The `--fail-on` threshold when the command line gives none."""
    strict: bool = False
    """`--strict` by default."""
    ignore: tuple[Ignore, ...] = ()
    """Accepted findings."""
    report_url: str | None = None
    """Base URL of the pages built by `compat matrix site`; finding ids in reports link there."""


@dataclass(frozen=True, kw_only=True)
class Ignored:
    """A finding that an ignore entry accepted."""

    finding: Finding
    """The finding, as doctor found it."""
    ignore: Ignore
    """The entry that accepted it."""


@dataclass(frozen=True, kw_only=True)
class Waivers:
    """What the ignore list did to one doctor run."""

    ignored: tuple[Ignored, ...] = ()
    """Findings taken out of the report's verdict by a live ignore."""
    expired: tuple[Ignore, ...] = ()
    """Entries past their `until` date whose finding is present: the finding counts again, and the run fails."""
    stale: tuple[Ignore, ...] = ()
    """Entries (live or expired) whose finding this run did not report: candidates for removal."""
