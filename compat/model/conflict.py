"""Why no pinned set exists: the causes a resolution failed on, as records (`ResolutionError.causes`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compat.model.asker import Asker
from compat.model.lock import Constraint
from compat.model.rejection import Rejection
from compat.model.search import (
    SEARCH_SECONDS_VARIABLE as SEARCH_SECONDS_VARIABLE,  # its home; report.lock reads it here
)


@dataclass(frozen=True, kw_only=True)
class Ask:
    """One requirement on the package in conflict, and who made it."""

    asker: Asker
    """Who asked (TARGET, PACKAGE with the parent's version and extras, CATALOG)."""
    package: str
    """The package required (canonical name)."""
    extras: tuple[str, ...]
    """Extras asked for, sorted."""
    specifier: str
    """The range required ("" for any)."""
    exact: bool
    """The requirement pins one version."""


class Shortfall(str, enum.Enum):
    """Why the releases the asks allow were not enough."""

    NONE = "none"  # nothing more to say
    CONTRADICTORY = "contradictory"  # each ask is met by some release, no release meets all at once
    NO_RELEASE = "no-release"  # the matrix has no release in the combined range
    REJECTED = "rejected"  # every release in range was dropped (see `rejections`)


class Alternative(str, enum.Enum):
    """A way out beside newer versions, from what the rejections were about."""

    NONE = "none"
    ANOTHER_GPU = "another-gpu"  # some release lacked kernels for a GPU
    NEWER_DRIVER = "newer-driver"  # some release needed a newer driver


@dataclass(frozen=True, kw_only=True)
class Upgrade:
    """A release that would lift the conflict ("use vllm >= 0.9.0")."""

    package: str
    """The package to move."""
    version: str
    """The oldest release that fits."""


class ConflictKind(str, enum.Enum):
    REQUIREMENTS = "requirements"  # the requirements on one package cannot be met on the target
    IMPOSED = "imposed"  # a constraint the catalog imposed on the way (to say why it was there)
    ALWAYS_KNOWN_FAILURE = "always-known-failure"  # every set that meets the targets hits a known failure
    TOO_DEEP = "too-deep"  # the search reached its bound before it decided: not proof that no set exists


@dataclass(frozen=True, kw_only=True)
class ConflictCause:
    """One cause of a failed resolution."""

    kind: ConflictKind
    """Which kind of cause."""
    package: str = ""
    """The package in conflict (REQUIREMENTS)."""
    asks: tuple[Ask, ...] = ()
    """The requirements on it, in the order they were made."""
    shortfall: Shortfall = Shortfall.NONE
    """Why the releases they allow were not enough."""
    specifier: str = ""
    """The combined range (NO_RELEASE)."""
    rejections: tuple[Rejection, ...] = ()
    """Why each release in range was dropped, newest first (REJECTED)."""
    upgrades: tuple[Upgrade, ...] = ()
    """Releases that would lift the conflict."""
    alternative: Alternative = Alternative.NONE
    """Another way out, offered beside `upgrades`."""
    constraint: Constraint | None = None
    """The constraint imposed (IMPOSED)."""
    signature: str | None = None
    """The known failure (ALWAYS_KNOWN_FAILURE)."""
    title: str | None = None
    """Its title, from the catalog."""
    seconds: float | None = None
    """The bound the search ran into, in seconds (TOO_DEEP)."""
    backtracked: tuple[str, ...] = ()
    """The packages the search backtracked on most, most first (TOO_DEEP)."""
    attempts: tuple[str, ...] = ()
    """What was tried before stopping, in order (TOO_DEEP)."""
