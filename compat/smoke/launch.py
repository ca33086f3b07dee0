"""The train stage's launched run from the user's launch settings: their launcher (torchrun, else accelerate's),
their accelerate config (read by the probe) or DeepSpeed file, the process count, and what a CPU machine cannot
run of them."""

from __future__ import annotations

from dataclasses import replace

from compat.model.facts import AccelerateConfig, Launcher
from compat.model.smoke import ACCELERATE_LAUNCH, TrainLaunch

TORCHRUN = Launcher.TORCHRUN.value

_NOT_RUN = {
    Launcher.DEEPSPEED: "the deepspeed launcher: it starts its ranks through pdsh and DeepSpeed's engine needs CUDA, "
                        "so smoke does not run it; the launched run is accelerate's",
    Launcher.SRUN: "srun: smoke does not start an srun step of its own (it needs a Slurm allocation, and inside a "
                   "step the tasks are already placed), so the launched run is accelerate's",
}
"""Declared launchers smoke does not start itself, each with why."""

_FULL = ("no", "none", "")
"""mixed_precision values that mean full precision."""


def train_launch(*, config: AccelerateConfig | None, deepspeed: str | None, processes: int, cpu: bool,
                 launcher: Launcher | None = None) -> TrainLaunch:
    """The launched run under the user's `launcher`: torchrun starts the child itself, deepspeed and srun are said
    not exercised and replaced by accelerate's run, the others (and None) are accelerate's run."""
    launch = _accelerate(config=config, deepspeed=deepspeed, processes=processes, cpu=cpu)
    if launcher is Launcher.TORCHRUN:
        return _torchrun(launch, user=config is not None or deepspeed is not None)
    why = _NOT_RUN.get(launcher) if launcher is not None else None
    if why is None:
        return launch
    return replace(launch, not_exercised=(why, *launch.not_exercised))


def _torchrun(accelerate: TrainLaunch, *, user: bool) -> TrainLaunch:
    """`torchrun --standalone --nproc_per_node=N`: the ranks' accelerate state comes from the RANK/WORLD_SIZE/LOCAL_RANK
    torchrun sets (gloo on a CPU machine). With the user's accelerate config or DeepSpeed file (`user`), each rank
    first has accelerate's own launch code turn `accelerate`'s arguments (the same `accelerate launch` would run, with
    the same CPU replacements) into the variables `Accelerator()` reads, as `accelerate launch` does for its ranks."""
    count = accelerate.processes
    arguments = ("--standalone", f"--nproc_per_node={count}")
    if user:
        return replace(accelerate, launcher=TORCHRUN, arguments=arguments, accelerate_arguments=accelerate.arguments)
    missing = ("torchrun with one process: no launched run",) if count < 2 else ()
    return TrainLaunch(launcher=TORCHRUN, processes=count, arguments=arguments, not_exercised=missing)


def _accelerate(*, config: AccelerateConfig | None, deepspeed: str | None, processes: int,
                cpu: bool) -> TrainLaunch:
    """`accelerate launch` as the user would start it: `--config_file` their config, the DeepSpeed file, the config's
    process count (else `processes`). On a CPU machine DeepSpeed and mixed precision are replaced by what runs there
    (a plain multi-process run, full precision) and each replacement is said in `not_exercised`."""
    count = config.num_processes if config is not None and config.num_processes else processes
    kind = (config.distributed_type or "").upper() if config is not None else ""
    distributed = "DEEPSPEED" if deepspeed is not None or kind == "DEEPSPEED" else "FSDP" if kind == "FSDP" else None
    missing: list[str] = []
    args: list[str] = ["--config_file", config.path] if config is not None else []
    if distributed == "DEEPSPEED" and cpu:
        stage = f" ZeRO stage {config.zero_stage}" if config is not None and config.zero_stage is not None else ""
        source = deepspeed or (config.path if config is not None else "")
        missing.append(f"DeepSpeed{stage} ({source}): DeepSpeed's engine needs CUDA, so the launched run is accelerate's "
                       "plain multi-process run")
        distributed = None
        deepspeed = None
    elif distributed == "FSDP" and cpu and config is not None:
        # Tried on CPU (accelerate 1.15, transformers 5.23): the Trainer's ranks ran as MULTI_CPU, unsharded, and
        # without use_cpu as one process each; neither would be FSDP.
        version = f" version {config.fsdp_version}" if config.fsdp_version is not None else ""
        missing.append(f"FSDP{version} ({config.path}): the Trainer shards with FSDP on CUDA devices only, so the "
                       "launched run is accelerate's plain multi-process run")
        distributed = None
    if distributed == "DEEPSPEED" and deepspeed is not None:
        args += ["--use_deepspeed", "--deepspeed_config_file", deepspeed]
    elif distributed is None and count > 1:
        # --multi_gpu keeps the config's other settings and drops its DeepSpeed/FSDP choice; on a CPU machine the
        # ranks form a gloo group (--cpu would fall back to one process).
        args.append("--multi_gpu")
    precision = (config.mixed_precision or "").lower() if config is not None else ""
    if config is None or (cpu and precision not in _FULL):
        if precision not in _FULL:
            missing.append(f"mixed precision {precision}: a CPU machine runs the steps in full precision")
        args.append("--mixed_precision=no")
    if config is None:
        args += ["--num_machines=1", "--dynamo_backend=no"]
    args.append(f"--num_processes={count}")
    if count < 2 and distributed is None and (config is not None or missing):
        missing.append(f"{config.path if config is not None else 'the launch'} starts one process: no launched run")
    return TrainLaunch(launcher=ACCELERATE_LAUNCH, processes=count, config=config.path if config is not None else None,
                       deepspeed=deepspeed, distributed=distributed, arguments=tuple(args),
                       not_exercised=tuple(missing))
