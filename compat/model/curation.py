"""What the curators' commands produce: a matrix validation and a release refresh."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class Validation:
    roots: tuple[Path, ...]
    """The directories checked, base first."""
    problems: tuple[str, ...]
    """One line each, `file: key: message`; empty when the matrix is valid."""
    packages: int
    """Packages with a releases file."""
    releases: int
    """Releases recorded across those files."""
    signatures: int
    """Catalog entries loaded."""

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, kw_only=True)
class PackageOutcome:
    package: str
    """Canonical name."""
    releases: int
    """Final releases recorded."""
    fetched: int
    """Core metadata documents read from the index (the rest came from the cache)."""
    unknown: int
    """Releases whose requirements stay unknown (no wheel)."""
    changed: bool
    """The file's bytes changed (or it is new)."""
    path: Path
    """The releases file written (or left as it was)."""


@dataclass(frozen=True, kw_only=True)
class RefreshResult:
    outcomes: tuple[PackageOutcome, ...]
    """One per package, in the order asked."""
    requests: int
    """HTTP requests sent, retries included."""


@dataclass(frozen=True, kw_only=True)
class Refreshed:
    result: RefreshResult
    """What changed per package and how many requests it took."""
    index: str
    """The index that was read, credentials redacted (safe to print)."""
