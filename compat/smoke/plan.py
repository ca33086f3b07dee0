"""Which stages `compat smoke` runs, with what, and why a stage is skipped: decided from the Facts alone."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from compat.errors import UsageError
from compat.model.facts import AccelerateConfig, Facts, Launcher
from compat.model.smoke import Stage, StagePlan
from compat.model.unknown import Unknown
from compat.smoke.launch import train_launch

IMPORTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("torch", "torch", ()),
    ("transformers", "transformers", ()),
    ("tokenizers", "tokenizers", ()),
    ("safetensors", "safetensors", ()),
    ("datasets", "datasets", ()),
    ("accelerate", "accelerate", ()),
    ("peft", "peft", ()),
    ("trl", "trl", ()),
    ("triton", "triton", ()),
    ("flash-attn", "flash_attn", ("flash_attn_2_cuda",)),
    ("xformers", "xformers", ("xformers.ops",)),
    ("vllm", "vllm", ("vllm._C",)),
    ("bitsandbytes", "bitsandbytes", ()),
    ("deepspeed", "deepspeed", ("deepspeed.ops",)),
    ("liger-kernel", "liger_kernel", ("liger_kernel.ops",)),
)
"""(distribution, top-level module, compiled extensions or kernel modules) of the packages the import stage loads."""

TRAINERS = {"sft": "SFTTrainer", "dpo": "DPOTrainer", "grpo": "GRPOTrainer", "online-dpo": "OnlineDPOTrainer"}
"""The trainers `--trainer` names, and the TRL class a script uses for each."""
RUNNABLE = ("sft", "dpo", "grpo", "online-dpo")
"""Trainers with a built-in two-step run on the tiny model (online-dpo scores with a random reward model built in place)."""

SERVE_MODES = ("engine", "server", "colocate")
"""The serve stage's children, in order: a vLLM engine (two generations, sleep and wake), `trl vllm-serve` with TRL's
client, GRPO with vLLM colocated. Each is its own process: an engine keeps its GPU memory until its process ends."""

SECONDS = {Stage.IMPORT: 180.0, Stage.DEVICE: 120.0, Stage.COLLECTIVE: 120.0, Stage.KERNELS: 180.0, Stage.SERVE: 600.0,
           Stage.TRAIN: 600.0}
"""Each stage's own time bound; the run's budget may cut it shorter."""


def parse_trainers(text: str) -> tuple[str, ...]:
    """`sft,dpo,grpo` as a tuple; a UsageError names a trainer compat does not know."""
    names = tuple(dict.fromkeys(t.strip().lower() for t in text.split(",") if t.strip()))
    unknown = [n for n in names if n not in TRAINERS]
    if unknown or not names:
        raise UsageError(f"--trainer takes {', '.join(TRAINERS)} (comma-separated), not {text!r}")
    return names


def parse_stages(text: str) -> tuple[Stage, ...]:
    """`import,train` as stages in the order they run; a UsageError names a stage compat does not have."""
    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    known = {s.value: s for s in Stage}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UsageError(f"--stages takes {', '.join(known)} (comma-separated), not {text!r}")
    return tuple(s for s in Stage if s.value in names)


def only_stages(plans: Iterable[StagePlan], stages: Iterable[Stage]) -> tuple[StagePlan, ...]:
    """The plans with every stage not in `stages` skipped, saying so; empty `stages`: the plans as they are."""
    chosen = tuple(stages)
    if not chosen:
        return tuple(plans)
    reason = f"not chosen (--stages {','.join(s.value for s in chosen)})"
    return tuple(p if p.stage in chosen else replace(p, skip=reason) for p in plans)


def script_trainers(facts: Facts) -> tuple[str, ...]:
    """The trainers the facts' training script uses (read with ast by the probe), in --trainer's names."""
    if facts.script is None:
        return ()
    by_class = {cls: name for name, cls in TRAINERS.items()}
    return tuple(by_class[c] for c in facts.script.trainers if c in by_class)


def _installed(facts: Facts, name: str) -> bool | None:
    found = facts.package(name)
    return None if isinstance(found, Unknown) else found is not None


def _gpus(facts: Facts) -> int | None:
    visible = facts.visible_gpus()
    return None if isinstance(visible, Unknown) else visible


def plan_stages(facts: Facts, *, trainers: Iterable[str] = (), processes: int = 2,
                accelerate: AccelerateConfig | None = None, deepspeed: str | None = None,
                launcher: Launcher | None = None) -> tuple[StagePlan, ...]:
    """Every stage in order, each with its arguments or why it is skipped. `launcher` (declared or probed),
    `accelerate` (the user's config) and `deepspeed` (a DeepSpeed JSON) shape the train stage's launched run."""
    chosen = tuple(trainers) or script_trainers(facts) or ("sft",)
    gpus = _gpus(facts)
    cpu = gpus == 0
    imports: list[str] = []
    for dist, module, extensions in IMPORTS:
        if _installed(facts, dist) is False:
            continue
        imports.append(f"{dist}={module}")
        imports.extend(f"ext:{dist}={ext}" for ext in extensions)
    plans = [StagePlan(stage=Stage.IMPORT, args=tuple(imports), seconds=SECONDS[Stage.IMPORT])]
    torch_missing = "torch is not installed" if _installed(facts, "torch") is False else None
    plans.append(StagePlan(stage=Stage.DEVICE, seconds=SECONDS[Stage.DEVICE], skip=torch_missing or (
        "no GPU visible: a CPU machine has no CUDA device to initialise" if cpu else None)))
    world = max(2, gpus or 0)
    plans.append(StagePlan(stage=Stage.COLLECTIVE, processes=world, seconds=SECONDS[Stage.COLLECTIVE], skip=torch_missing))
    plans.append(StagePlan(stage=Stage.KERNELS, seconds=SECONDS[Stage.KERNELS], skip=torch_missing))
    serve_skip = None
    if _installed(facts, "vllm") is False:
        serve_skip = "vllm is not installed"
    elif cpu:
        serve_skip = "no GPU visible: the vLLM engine is not started on a CPU machine"
    plans.append(StagePlan(stage=Stage.SERVE, args=SERVE_MODES, seconds=SECONDS[Stage.SERVE], skip=serve_skip))
    train_skip = "trl is not installed" if _installed(facts, "trl") is False else torch_missing
    runnable = tuple(t for t in chosen if t in RUNNABLE) or chosen
    args = runnable + (("--lora",) if _installed(facts, "peft") is not False else ())
    launch = None
    if _installed(facts, "accelerate") is not False:
        # Two ranks on one GPU is no run a user makes (NCCL refuses a duplicate GPU): compat's own default count
        # is cut to the GPUs visible; a count the user's config names is run as the user's run would be.
        own = accelerate is None or not accelerate.num_processes
        ranks = min(processes, gpus) if own and gpus and processes > gpus else processes
        launch = train_launch(config=accelerate, deepspeed=deepspeed, processes=ranks, cpu=cpu, launcher=launcher)
        if ranks < processes:
            launch = replace(launch, not_exercised=(
                f"{processes} processes: {gpus} GPU{'s' if gpus != 1 else ''} visible, so the launched run has "
                f"{ranks}", *launch.not_exercised))
    launched = launch.processes if launch is not None and launch.runs else 1
    plans.append(StagePlan(stage=Stage.TRAIN, args=args, processes=launched, seconds=SECONDS[Stage.TRAIN],
                           skip=train_skip, launch=launch))
    return tuple(plans)
