"""The train stage's launched run from the user's launch settings: their accelerate config (read by the
probe) or DeepSpeed file, the process count, and what a CPU machine cannot run of them."""

from __future__ import annotations

from compat.model.facts import AccelerateConfig
from compat.model.smoke import TrainLaunch

LAUNCHER = "accelerate launch"

_FULL = ("no", "none", "")
"""mixed_precision values that mean full precision."""


def train_launch(*, config: AccelerateConfig | None, deepspeed: str | None, processes: int,
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
    return TrainLaunch(launcher=LAUNCHER, processes=count, config=config.path if config is not None else None,
                       deepspeed=deepspeed, distributed=distributed, arguments=tuple(args),
                       not_exercised=tuple(missing))
