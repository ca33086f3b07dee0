"""What `compat lock` and `compat plan` produce: pinned sets and ordered install steps.

Plain frozen values; `compat.resolve.resolver` builds a `Lock`, `compat.resolve.plan` builds a `Plan`, and the
renderers in `compat/report/` turn them into requirements files, JSON or text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

SCHEMA_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class Pin:
    name: str
    """Canonical project name ("flash-attn")."""
    version: str
    """Pinned release without local tag ("2.5.1")."""
    local: str | None
    """Local tag of the build to install ("cu126") when it comes from the PyTorch wheel index; None for the public index."""
    extras: tuple[str, ...]
    """Extras asked for on this package ("vllm" for trl[vllm]), sorted."""
    reasons: tuple[str, ...]
    """Why this pin: the targets and parents that asked for it ("vllm 0.7.2 pins torch==2.5.1")."""
    index_url: str | None
    """The index the build must come from; None when the public default index has it."""
    after_torch: bool = False
    """Compiles against torch: install after torch, with --no-build-isolation."""

    @property
    def full_version(self) -> str:
        return f"{self.version}+{self.local}" if self.local else self.version


@dataclass(frozen=True, kw_only=True)
class Constraint:
    requirement: str
    """The requirement that was imposed ("vllm>=0.7.2")."""
    signature: str
    """The catalog signature that made it necessary."""
    why: str
    """The matched conditions, for a person ("trl 0.15.2, vllm 0.7.1, 2 GPU(s)")."""


@dataclass(frozen=True, kw_only=True)
class Lock:
    schema_version: int
    """Version of the JSON layout."""
    targets: tuple[str, ...]
    """The requirement strings asked for, as given."""
    python_version: str
    """Target Python (major.minor)."""
    platform: str
    """Target platform ("linux-x86_64")."""
    hardware: tuple[str, ...]
    """The hardware the set was resolved for, one fact a line ("8x NVIDIA H100 80GB HBM3 (sm_90)")."""
    pins: tuple[Pin, ...]
    """The pinned set, sorted by name."""
    unpinned: tuple[str, ...]
    """Requirements on packages the release snapshot does not track; pip resolves them."""
    constraints: tuple[Constraint, ...]
    """Constraints the catalog imposed to keep the set off a known failure."""
    notes: tuple[str, ...]
    """Things a person should know (facts that could not be checked, install order)."""

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)


class StepKind(str, enum.Enum):
    UNINSTALL = "uninstall"  # what must go before the new torch arrives
    TORCH = "torch"  # torch (and its companions) from the right index
    PACKAGES = "packages"  # everything that pins or needs that torch
    EXTENSIONS = "extensions"  # compiled against torch: last, without build isolation


@dataclass(frozen=True, kw_only=True)
class Step:
    kind: StepKind
    """Where the step sits in the order."""
    packages: tuple[str, ...]
    """Requirement strings installed (or names removed) by the step."""
    command: tuple[str, ...]
    """The command to run, one argument per item."""
    why: str
    """One line: what the step changes."""
    clears: tuple[str, ...] = ()
    """Ids of the findings this step clears."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    schema_version: int
    """Version of the JSON layout."""
    lock: Lock
    """The set the plan leads to."""
    steps: tuple[Step, ...]
    """In the order they must run; empty when nothing has to change."""
    kept: tuple[str, ...]
    """Installed packages that stay as they are ("trl 0.15.2")."""
    uncleared: tuple[str, ...]
    """Findings no version change clears, with their advice ("id: advice")."""
