"""What `compat lock` and `compat plan` produce: pinned sets and ordered install steps.

Plain frozen values; `compat.resolve` builds a `Lock`, `compat.resolve.plan` builds a `Plan`, and the
renderers in `compat/report/` turn them into requirements files, JSON or text. Every reason is a
record (a kind and the facts involved), never a sentence.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compat.model.installer import Installer as Installer  # its home; a Plan names it, and readers import it here too
from compat.model.unknown import Unknown

LOCK_SCHEMA_VERSION = 2
"""Version of the lock JSON layout. 2: reasons, constraints, hardware and notes are records."""

PLAN_SCHEMA_VERSION = 2
"""Version of the plan JSON layout (its lock is laid out as LOCK_SCHEMA_VERSION says). 2: steps carry records."""


class PinReasonKind(str, enum.Enum):
    TARGET = "target"  # the user asked for the package
    PARENT = "parent"  # another pinned package requires it
    TORCH_BUILD = "torch-build"  # which torch build was chosen, and what it was checked against
    KEPT_OFF = "kept-off"  # a catalog constraint moved this package
    TESTED = "tested-together"  # a project pinned this release beside a target's (matrix/stacks.toml)
    CONTEMPORARY = "contemporaneous"  # released within a target's own release window
    NEWEST = "newest"  # the newest release allowed; never tested with the targets
    CUDA_BUILD = "cuda-build"  # a build of another CUDA than the default index's, to match torch's (matrix/builds.toml)
    PUBLISHER_WHEEL = "publisher-wheel"  # an extension wheel another publisher built for this torch build (matrix/extensions.toml)


@dataclass(frozen=True, kw_only=True)
class PinReason:
    """One reason for a pin."""

    kind: PinReasonKind
    """Which kind of reason."""
    package: str = ""
    """The required package (TARGET, PARENT)."""
    extras: tuple[str, ...] = ()
    """Extras asked for on it (TARGET), sorted."""
    specifier: str = ""
    """The range asked for ("==2.5.1"; "" for any) (TARGET, PARENT)."""
    exact: bool = False
    """The parent pins one version (PARENT)."""
    parent: str | None = None
    """The requiring package (PARENT)."""
    parent_version: str | None = None
    """Its pinned version."""
    parent_extras: tuple[str, ...] = ()
    """The extras it was installed with, sorted."""
    variant: str | None = None
    """The torch build tag ("cu126") (TORCH_BUILD, CUDA_BUILD), or the one a target pinned (TARGET: "torch==2.6.0+cu126")."""
    cuda: str | None = None
    """The CUDA of that build ("12.6"); None for a CPU build."""
    compute_capabilities: tuple[str, ...] = ()
    """The GPU architectures the build was checked to have, lowest first ("9.0")."""
    driver: str | None = None
    """The driver the build was checked to run on."""
    default: bool = True
    """The public index serves this build."""
    constraint: Constraint | None = None
    """The catalog constraint that moved the package (KEPT_OFF)."""
    stack: str | None = None
    """The stack's id (TESTED)."""
    tested_with: tuple[str, ...] = ()
    """The targets the stack ran, as "package version" (TESTED), sorted."""
    source: str | None = None
    """Where the stack's pins are: owner/name@commit:path (TESTED); where the build was read (CUDA_BUILD, PUBLISHER_WHEEL)."""
    date: str | None = None
    """The stack's date (TESTED)."""
    days: int | None = None
    """Days from the target's release (`parent`, `parent_version`) to this one's; negative: before it (CONTEMPORARY)."""

    def sort_key(self) -> tuple[str, str, str]:
        """Targets and parents in the order of their names (the requiring package, then the requirement)."""
        if self.kind is PinReasonKind.TARGET:
            return ("target", "", self.specifier)
        extras = f"[{','.join(self.parent_extras)}]" if self.parent_extras else ""
        verb = "pins" if self.exact else "requires"
        return (f"{self.parent} {self.parent_version}{extras}", verb, self.specifier)


class ConstraintKind(str, enum.Enum):
    REQUIRE = "require"  # the signature's version fix
    EXCLUDE = "exclude"  # leave one of the signature's package ranges


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """What the catalog imposed to keep the set off a known failure."""

    kind: ConstraintKind
    """A fix required, or a range left."""
    package: str
    """Canonical project name the constraint is on."""
    specifier: str
    """The range required (REQUIRE) or excluded (EXCLUDE; "" excludes the package altogether)."""
    signature: str
    """The catalog signature that made it necessary."""
    evidence: tuple[str, ...]
    """The matched conditions, as the catalog evaluation stated them ("trl 0.15.2 (<0.16.0,>=0.14.0)")."""


@dataclass(frozen=True, kw_only=True)
class GpuCount:
    """GPUs of one model and architecture on the target."""

    name: str
    """Model name as reported or declared ("NVIDIA H100 80GB HBM3")."""
    compute_capability: str | None
    """"9.0"; None when not known."""
    count: int
    """How many."""


@dataclass(frozen=True, kw_only=True)
class HardwareSummary:
    """The hardware a set was resolved for."""

    gpus: tuple[GpuCount, ...] | Unknown
    """The GPUs, grouped; empty without GPUs."""
    driver: str | None | Unknown
    """The NVIDIA driver; None without one."""
    max_cuda: str | None
    """Highest CUDA the driver fully supports; None without a driver or when older than every curated CUDA."""


class LockNoteKind(str, enum.Enum):
    GPUS_UNKNOWN = "gpus-unknown"  # torch builds not checked against the GPU architecture
    GPU_ARCH_UNKNOWN = "gpu-arch-unknown"  # one GPU's compute capability is unknown
    DRIVER_UNKNOWN = "driver-unknown"  # CUDA builds not checked against the driver
    REQUIREMENTS_UNKNOWN = "requirements-unknown"  # sdist only: pip resolves its requirements
    AFTER_TORCH = "after-torch"  # compiles against torch: install it after the rest
    FROM_SOURCE = "from-source"  # a pinned extension with no prebuilt wheel for the set: pip compiles it
    HELD_BACK = "held-back"  # torch is the newest an extension's prebuilt wheels cover; a newer one fits the machine
    STILL_MATCHES = "still-matches"  # a known failure with a version fix still applies to the set


@dataclass(frozen=True, kw_only=True)
class LockNote:
    """Something a person should know about a lock."""

    kind: LockNoteKind
    """Which kind of note."""
    reason: str | None = None
    """Why a fact is unknown, as the probe recorded it (GPUS_UNKNOWN, DRIVER_UNKNOWN); which wheels the release
    has and what the set needs (FROM_SOURCE); which wheels hold torch back and what a newer torch needs (HELD_BACK);
    the wheel's URL when another publisher's wheel is the one to install after torch (AFTER_TORCH)."""
    gpu_index: int | None = None
    """The GPU concerned (GPU_ARCH_UNKNOWN)."""
    gpu: str | None = None
    """Its name."""
    package: str | None = None
    """The package concerned (REQUIREMENTS_UNKNOWN, AFTER_TORCH)."""
    version: str | None = None
    """Its pinned version."""
    signature: str | None = None
    """The catalog signature (STILL_MATCHES)."""
    title: str | None = None
    """Its title, from the catalog."""
    advice: str | None = None
    """Its fix advice, from the catalog."""
    requires: tuple[str, ...] = ()
    """Its version fix, from the catalog."""


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
    reasons: tuple[PinReason, ...]
    """Why this pin: targets and parents (in `PinReason.sort_key` order), then the torch build, then catalog constraints."""
    index_url: str | None
    """The index the build must come from; None when the public default index has it."""
    after_torch: bool = False
    """Compiles against torch: install after torch, with --no-build-isolation."""
    wheel: str | None = None
    """The wheel's URL, for a build the default index does not carry (vLLM's +cu118; `local` is its tag)."""

    @property
    def full_version(self) -> str:
        return f"{self.version}+{self.local}" if self.local else self.version

    def requirement(self, *, extras: bool = True) -> str:
        """The line that installs it: `name[extras]==version`, or `name[extras] @ URL` for a wheel."""
        name = f"{self.name}[{','.join(self.extras)}]" if extras and self.extras else self.name
        return f"{name} @ {self.wheel}" if self.wheel else f"{name}=={self.full_version}"


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
    hardware: HardwareSummary
    """The hardware the set was resolved for."""
    pins: tuple[Pin, ...]
    """The pinned set, sorted by name."""
    unpinned: tuple[str, ...]
    """Requirements on packages the release snapshot does not track; pip resolves them."""
    constraints: tuple[Constraint, ...]
    """Constraints the catalog imposed to keep the set off a known failure."""
    notes: tuple[LockNote, ...]
    """Things a person should know (facts that could not be checked, install order)."""

    def pin(self, name: str) -> Pin | None:
        return next((p for p in self.pins if p.name == name), None)


@dataclass(frozen=True, kw_only=True)
class FullLock:
    """A lock closed over every transitive dependency by `uv pip compile` (compat's pins as constraints)."""

    lock: Lock
    """compat's own lock: the tracked packages, each with its reasons."""
    text: str | None
    """uv's output (a requirements file or a PEP 751 pylock.toml, hashes included); None when uv could not run."""
    offline: str | None
    """Why only the tracked pins are there (the index could not be reached, uv is missing); None when closed."""
    pylock: bool = False
    """`text` is a pylock.toml."""


class StepKind(str, enum.Enum):
    UNINSTALL = "uninstall"  # what must go before the new torch arrives
    TORCH = "torch"  # torch (and its companions) from the right index
    PACKAGES = "packages"  # everything that pins or needs that torch
    EXTENSIONS = "extensions"  # compiled against torch: last, without build isolation


@dataclass(frozen=True, kw_only=True)
class Step:
    kind: StepKind
    """Where the step sits in the order; it says what the step changes."""
    packages: tuple[str, ...]
    """Requirement strings installed (or names removed) by the step."""
    command: tuple[str, ...]
    """The command to run, one argument per item."""
    index_url: str | None = None
    """The index torch comes from (TORCH); None for the default index."""
    reasons: tuple[PinReason, ...] = ()
    """Why the torch family moves: the last reason of each of its pins (TORCH)."""
    clears: tuple[str, ...] = ()
    """Ids of the findings this step clears."""


@dataclass(frozen=True, kw_only=True)
class Kept:
    """An installed package that stays as it is."""

    name: str
    """Canonical project name."""
    version: str
    """The installed version, as installed ("2.5.1+cu124")."""


@dataclass(frozen=True, kw_only=True)
class Uncleared:
    """A found problem no version change clears."""

    finding: str
    """The finding's id."""
    advice: str | None
    """Its fix advice, from the catalog."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    schema_version: int
    """Version of the JSON layout."""
    lock: Lock
    """The set the plan leads to."""
    steps: tuple[Step, ...]
    """In the order they must run; empty when nothing has to change."""
    kept: tuple[Kept, ...]
    """Installed packages that stay as they are."""
    uncleared: tuple[Uncleared, ...]
    """Findings no version change clears."""
