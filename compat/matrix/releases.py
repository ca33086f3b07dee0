"""Every release of the tracked packages (matrix/releases/<package>.toml, generated). STUB."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version


@dataclass(frozen=True, kw_only=True)
class Release:
    version: Version
    uploaded: str
    """Date of the earliest file of the release (YYYY-MM-DD)."""
    yanked: bool
    yanked_reason: str | None
    requires_python: SpecifierSet | None
    requires: tuple[Requirement, ...] | None
    """Requires-Dist on tracked packages, markers and extras kept; None when unknown (sdist only)."""
    extras: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PackageReleases:
    package: str
    releases: tuple[Release, ...]
    """Oldest first."""


class ReleaseIndex:
    """Loads matrix/releases/<package>.toml on first use (doctor rarely needs them all)."""

    def __init__(self, dirs: Sequence[Path]) -> None:
        self.dirs = tuple(dirs)

    def packages(self) -> tuple[str, ...]:
        raise NotImplementedError

    def get(self, package: str) -> PackageReleases | None:
        raise NotImplementedError
