"""A job's environments side by side: what each node (or rank) reported, and how they differ.

`Member` is what was gathered from one rank or one node (its facts, or why there are none);
`FleetReport` is the judged result: each node's findings, the differences between nodes, the
smoke test's timings and, against a saved snapshot, what changed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compat.model.facts import Facts
from compat.model.findings import Finding, Severity
from compat.model.smoke import StageResult, Status

SCHEMA_VERSION = 2
"""Version of the fleet report's JSON layout. 2: a finding's evidence is a record, as in doctor's."""


class MemberState(str, enum.Enum):
    """Whether a rank or node answered."""

    OK = "ok"  # its facts arrived
    TIMED_OUT = "timed-out"  # no answer within the time bound (hung, or still starting)
    FAILED = "failed"  # it answered with an error, or died
    UNREADABLE = "unreadable"  # its saved facts file could not be read


class Aspect(str, enum.Enum):
    """What differs between members; each names one cross-node check."""

    PACKAGE = "package"  # the version of a tracked package (subject: its name)
    TORCH_BUILD = "torch-build"  # torch.__version__, local tag included
    TORCH_CUDA = "torch-cuda"  # the CUDA torch was built with
    NCCL = "nccl"  # the NCCL torch loaded (torch.cuda.nccl.version())
    DRIVER_BRANCH = "driver-branch"  # the NVIDIA driver's major version
    DRIVER = "driver"  # the full driver version, same branch
    GPU_MODEL = "gpu-model"  # the GPU models of a node
    GPU_MEMORY = "gpu-memory"  # the GPU memory of a node
    GPU_COUNT = "gpu-count"  # GPUs a rank of the node sees
    PYTHON = "python"  # the interpreter's major.minor
    ENV = "env"  # a NCCL_*, CUDA_* or HF_* variable (subject: its name)
    SHM = "shm"  # the size of /dev/shm

    def __str__(self) -> str:
        return self.value


class WorldProblem(str, enum.Enum):
    """How the launcher's world size disagrees with the GPUs the members see."""

    MORE_RANKS_THAN_GPUS = "more-ranks-than-gpus"  # some node runs more ranks than it has visible GPUs
    WORLD_EXCEEDS_GPUS = "world-exceeds-gpus"  # the world size is larger than all visible GPUs together


@dataclass(frozen=True, kw_only=True)
class Member:
    """What one rank (or one node, when gathered per node) reported."""

    node: str
    """Host name (the node's name under Slurm, the file stem of a saved snapshot)."""
    rank: int | None = None
    """Global rank under torch.distributed; None when gathered once per node."""
    local_rank: int | None = None
    """Rank within the node; None when gathered once per node."""
    state: MemberState = MemberState.OK
    """Whether it answered."""
    facts: Facts | None = None
    """Its facts; None unless `state` is OK."""
    detail: str | None = None
    """Why there are no facts (the error, or the time bound that passed)."""
    seconds: float | None = None
    """How long gathering its facts took, when measured."""


@dataclass(frozen=True, kw_only=True)
class Variant:
    """One value of a differing aspect and the members that have it."""

    value: str | None
    """The value as reported ("2.5.1+cu124"); None: absent (not installed, not set, no GPU)."""
    members: tuple[str, ...]
    """Node names, or "node[rank N]" where ranks of one node differ; sorted."""


@dataclass(frozen=True, kw_only=True)
class Difference:
    """An aspect on which the members of the job do not agree."""

    aspect: Aspect
    """What differs."""
    subject: str
    """The package or variable name for PACKAGE and ENV; empty otherwise."""
    severity: Severity
    """How likely the difference is to break or slow the job."""
    variants: tuple[Variant, ...]
    """Every value found, the most common first (ties by value)."""


@dataclass(frozen=True, kw_only=True)
class SharedFinding:
    """One doctor finding and the nodes it holds on."""

    finding: Finding
    """The finding (its words as on the first node it held on)."""
    members: tuple[str, ...]
    """Where it holds, sorted."""


@dataclass(frozen=True, kw_only=True)
class WorldCheck:
    """The launcher's world size against the members and their GPUs."""

    problem: WorldProblem
    """What disagrees."""
    severity: Severity
    """How bad it is."""
    world_size: int
    """The launcher's world size."""
    gpus: int
    """Visible GPUs of all members together (MORE_RANKS_THAN_GPUS: of `members`' node)."""
    members: tuple[str, ...] = ()
    """The node concerned (MORE_RANKS_THAN_GPUS)."""
    ranks: int = 0
    """Ranks on that node (MORE_RANKS_THAN_GPUS)."""


@dataclass(frozen=True, kw_only=True)
class RankTiming:
    """One rank's all-reduce in the smoke test."""

    rank: int
    """Global rank."""
    node: str
    """Its host."""
    seconds: float | None
    """Wall time of its all-reduces; None when it did not finish within the timeout."""
    error: str | None = None
    """What the backend raised, if it raised."""


@dataclass(frozen=True, kw_only=True)
class PairTiming:
    """An all-reduce between one rank on each of two nodes: the link between them."""

    a: str
    """First node (sorted)."""
    b: str
    """Second node."""
    seconds: float | None
    """Time of one all-reduce of `Smoke.size_bytes`; None when it failed or timed out."""
    bus_gbps: float | None
    """Bus bandwidth in GB/s (for two ranks, bytes / seconds); None with `seconds`."""
    error: str | None = None
    """What the backend raised, or the timeout that passed."""


@dataclass(frozen=True, kw_only=True)
class Smoke:
    """A short all-reduce on the job's real backend."""

    backend: str
    """"nccl" on GPUs, "gloo" otherwise."""
    size_bytes: int
    """Bytes reduced per all-reduce."""
    timeout_s: float
    """The bound on each collective."""
    ranks: tuple[RankTiming, ...]
    """Every rank's time, by rank."""
    pairs: tuple[PairTiming, ...]
    """One entry per pair of nodes, sorted."""
    error: str | None = None
    """Why the whole test could not run (the backend failed to start)."""


@dataclass(frozen=True, kw_only=True)
class Change:
    """An aspect of one member that differs from the baseline snapshot."""

    member: str
    """Node name (or "node[rank N]")."""
    aspect: Aspect
    """What changed."""
    subject: str
    """Package or variable name for PACKAGE and ENV; empty otherwise."""
    before: str | None
    """The baseline's value; None: absent there."""
    after: str | None
    """The value now; None: absent now."""


@dataclass(frozen=True, kw_only=True)
class NodeStatus:
    """A member that gave no facts."""

    member: str
    """Node name (or "node[rank N]")."""
    state: MemberState
    """Why not."""
    detail: str | None
    """The error or the time bound."""


@dataclass(frozen=True, kw_only=True)
class NodeSmoke:
    """`compat smoke` on one node (`compat fleet --smoke`): each stage's result, the steps and output left out."""

    node: str
    """The node's name (the report file's stem)."""
    stages: tuple[StageResult, ...] = ()
    """Every stage as the node ran it, with explain's verdict on a failed one."""
    error: str | None = None
    """Why the node left no readable smoke report (it timed out, crashed, wrote nothing); None when it did."""

    @property
    def failed(self) -> tuple[str, ...]:
        """The stages that failed on this node."""
        return tuple(s.stage.value for s in self.stages if s.status is Status.FAIL)


@dataclass(frozen=True, kw_only=True)
class FleetReport:
    """A job judged as a whole."""

    members: tuple[str, ...]
    """Every member's name, in order (node, then rank)."""
    nodes: int
    """Distinct nodes."""
    world_size: int | None
    """The launcher's world size when known."""
    missing: tuple[NodeStatus, ...]
    """Members that gave no facts (timed out, failed, unreadable)."""
    differences: tuple[Difference, ...]
    """Where the members disagree, worst first."""
    world: tuple[WorldCheck, ...]
    """Disagreements between the world size and the GPUs."""
    findings: tuple[SharedFinding, ...]
    """Doctor's findings, each with the members it holds on, worst first."""
    smoke: Smoke | None = None
    """The smoke test's result, when run."""
    slow_pairs: tuple[PairTiming, ...] = ()
    """Smoke-test links at less than half the median bus bandwidth (with three pairs or more)."""
    baseline: tuple[Change, ...] | None = None
    """What changed since the baseline snapshot; None without one."""
    node_smoke: tuple[NodeSmoke, ...] = ()
    """`compat smoke` on every node (`--smoke` with DIR or --slurm), by node; empty when not run."""
    failed: bool = False
    """Something reaches the request's fail-on threshold (exit 1)."""

