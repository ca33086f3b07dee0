"""`compat smoke`: the stack run for real, stage by stage, and what each stage showed.

A `StagePlan` is what will run (or why a stage will not); a `StageResult` is what it did: its
steps as the stage's child reported them, its time, and for a failure the tail of its output and
what `compat explain` made of it (`Diagnosis`). `SmokeReport` is the whole run.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compat.model.lock import Lock

SCHEMA_VERSION = 1


class Stage(str, enum.Enum):
    """The stages, in the order they run: each needs what the ones before it proved."""

    IMPORT = "import"  # every tracked package that is installed, and the compiled extensions
    DEVICE = "device"  # CUDA init, a matmul per dtype, compiled architectures, peer access
    COLLECTIVE = "collective"  # an all-reduce on two local processes (NCCL on GPUs, else gloo)
    KERNELS = "kernels"  # flash-attn forward/backward, SDPA backends, a triton kernel, bitsandbytes 4-bit
    SERVE = "serve"  # a vLLM engine on the tiny model, two generations
    TRAIN = "train"  # two steps of each TRL trainer named, LoRA, save and reload, accelerate launch

    def __str__(self) -> str:
        return self.value


class Status(str, enum.Enum):
    """How a stage or one of its steps ended."""

    PASS = "pass"
    FAIL = "fail"  # it ran and failed, crashed, or ran past its time bound
    SKIPPED = "skipped"  # it did not run; the reason says why (not applicable here, budget spent)

    def __str__(self) -> str:
        return self.value


ACCELERATE_LAUNCH = "accelerate launch"
"""The launched run's launcher unless the user's is torchrun."""


@dataclass(frozen=True, kw_only=True)
class TrainLaunch:
    """How the train stage's launched run starts: the user's accelerate config or DeepSpeed file, and what of
    their settings this machine runs and what it does not."""

    launcher: str
    """The launcher that started the run: "accelerate launch" (ACCELERATE_LAUNCH) or "torchrun"."""
    processes: int
    """Processes it starts: the config's `num_processes`, else `--processes`."""
    config: str | None = None
    """The user's accelerate config, passed as `--config_file`; None: accelerate's defaults."""
    deepspeed: str | None = None
    """A DeepSpeed JSON passed as `--deepspeed_config_file`; None: none, or the config's own DeepSpeed settings."""
    distributed: str | None = None
    """FSDP or DEEPSPEED: the sharding the run must really use (the child checks accelerate's state);
    None: a plain multi-process run."""
    arguments: tuple[str, ...] = ()
    """The launcher's arguments before the script: `accelerate launch`'s (the config, the process count, what compat
    overrides) or torchrun's."""
    accelerate_arguments: tuple[str, ...] = ()
    """Under torchrun with the user's accelerate config or DeepSpeed file: the `accelerate launch` arguments whose
    variables (ACCELERATE_MIXED_PRECISION, ACCELERATE_USE_FSDP, FSDP_*, ...) accelerate's own launch code computes in
    each rank before the trainer starts; () none."""
    not_exercised: tuple[str, ...] = ()
    """What of the user's settings the run does not exercise here, each with why."""

    @property
    def default(self) -> bool:
        """accelerate's run with nothing of the user's: its steps name it, the report adds nothing."""
        return self.launcher == ACCELERATE_LAUNCH and not (self.config or self.deepspeed or self.not_exercised)

    @property
    def runs(self) -> bool:
        """Whether there is a launched run at all (one process and no sharding to try: none)."""
        return self.processes > 1 or self.distributed is not None


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One stage as planned from the facts and the request."""

    stage: Stage
    """Which stage."""
    args: tuple[str, ...] = ()
    """Arguments to the stage's child (the packages to import, the trainers)."""
    processes: int = 1
    """Processes of its launched run (collective: the all-reduce's ranks; train: the accelerate run, 1 for none)."""
    seconds: float = 120.0
    """The stage's own time bound (the run's budget may cut it shorter)."""
    skip: str | None = None
    """Why the stage does not run here; None when it runs."""
    launch: TrainLaunch | None = None
    """The train stage's launched run; None for the other stages and when there is none."""


@dataclass(frozen=True, kw_only=True)
class ChildOutput:
    """What one child process of a stage left: its exit and its output."""

    command: str
    """What ran, for the report ("python child.py train sft", "torchrun x2 child.py collective")."""
    returncode: int | None
    """Its exit code; None when it was killed at its time bound or could not start."""
    stdout: str
    """Standard output (the step lines and whatever the libraries printed)."""
    stderr: str
    """Standard error (tracebacks)."""
    seconds: float
    """Wall time."""
    timed_out: bool = False
    """Killed at its time bound."""
    error: str | None = None
    """Why it could not start (the interpreter is missing); None when it started."""


@dataclass(frozen=True, kw_only=True)
class Step:
    """One thing a stage's child checked, as it reported it."""

    name: str
    """What was checked ("import trl", "sft", "sft+lora", "matmul bf16 cuda:0")."""
    status: Status
    """How it ended."""
    seconds: float
    """Wall time of the step in the child."""
    detail: str | None = None
    """The version, the skip reason, or the error's last line."""


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    """What `compat explain` made of a failing stage's output."""

    verdict: str
    """explain's verdict: known, unknown-environment or not-environment."""
    cause_id: str | None
    """The catalog signature's id, else the API index key that names the cause (`api:transformers:X`); None: none."""
    title: str
    """The cause in one line: the signature's title, else the root error's last line."""
    fix: str | None
    """What to do, tailored to the environment; None when explain has no fix."""


@dataclass(frozen=True, kw_only=True)
class StageResult:
    """One stage as it ran."""

    stage: Stage
    """Which stage."""
    status: Status
    """Pass when the child exited 0 and no step failed."""
    seconds: float
    """Wall time of the stage's child processes together."""
    reason: str | None = None
    """Why it was skipped or failed (the timeout, the exit code, the failed steps)."""
    steps: tuple[Step, ...] = ()
    """What the child reported, in order."""
    output: str | None = None
    """The tail of a failing stage's output (stderr, then stdout)."""
    diagnosis: Diagnosis | None = None
    """explain's reading of `output`; None when the stage did not fail."""
    launch: TrainLaunch | None = None
    """The launcher and config the train stage's launched run used, and what it did not exercise."""


@dataclass(frozen=True, kw_only=True)
class SmokeReport:
    """A whole `compat smoke` run."""

    python: str
    """The judged interpreter."""
    stages: tuple[StageResult, ...]
    """Every stage, in order, run or skipped."""
    budget_s: float
    """The bound on the whole run."""
    seconds: float
    """Wall time of the whole run."""
    trainers: tuple[str, ...] = ()
    """The TRL trainers the train stage ran."""

    @property
    def failed(self) -> bool:
        """Some stage failed (exit 1)."""
        return any(s.status is Status.FAIL for s in self.stages)


@dataclass(frozen=True, kw_only=True)
class Verification:
    """`compat lock --verify`: the lock installed into a throwaway venv and smoked there."""

    lock: Lock
    """The set that was verified (written only when `passed`)."""
    install_error: str | None
    """Why the set could not be installed (uv's last lines); None when it installed."""
    smoke: SmokeReport | None
    """The smoke run in the new venv; None when the install failed."""
    install_s: float
    """Time to create and fill the venv."""

    @property
    def passed(self) -> bool:
        """Installed, and no stage that ran failed (skipped stages are what this machine could not verify)."""
        return self.install_error is None and self.smoke is not None and not self.smoke.failed
