"""What `compat matrix refresh --api` did to each package's API index."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ApiOutcome:
    """What a refresh did to one package's API index."""

    package: str
    releases: int
    """Releases indexed after the refresh."""
    added: int
    """Releases extracted by this refresh."""
    missing: int
    """Releases recorded as not indexed (no readable file)."""
    requests: int
    """HTTP requests this package cost."""
    seconds: float
    """Wall time spent on this package."""
