"""How training is started against how many GPUs it will see."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import about, cannot_check, found
from compat.matrix import Matrix
from compat.model.facts import AccelerateConfig, Facts, Launcher
from compat.model.findings import Evidence, Finding, observed
from compat.model.unknown import Unknown

NO_LAUNCHER = "multi-gpu-without-launcher"
TOO_MANY_PROCESSES = "more-processes-than-gpus"
VISIBLE_BEYOND = "cuda-visible-devices-beyond-gpus"
SLURM_BINDING = "slurm-task-gpu-binding-local-rank"

OWNS = {
    NO_LAUNCHER: frozenset({"count"}),
    TOO_MANY_PROCESSES: frozenset({"launcher", "processes", "count", "setting"}),
    VISIBLE_BEYOND: frozenset({"visible", "count"}),
    SLURM_BINDING: frozenset({"binding"}),
}
"""The catalog entries these checks speak through, and the `{fields}` they fill in each."""


def check_launcher(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    count = facts.visible_gpus()
    if isinstance(count, Unknown) or count < 2:
        return
    launcher = facts.launch.launcher
    if isinstance(launcher, Unknown):
        yield cannot_check(matrix, NO_LAUNCHER, f"launcher: {launcher.reason}")
    elif launcher == Launcher.PYTHON:
        yield found(
            matrix, NO_LAUNCHER, values={"count": count},
            evidence=(about(facts, "launcher", "launcher python"), about(facts, "gpus", f"{count} visible GPUs")),
        )


def check_processes(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """More processes on this node than GPUs for them: two ranks share a device.

    accelerate's num_processes and torchrun's LOCAL_WORLD_SIZE are compared with the GPUs the
    process sees; srun's tasks per node with the GPUs Slurm gave the node (SLURM_GPUS_ON_NODE),
    since `--gpus-per-task` narrows CUDA_VISIBLE_DEVICES to each task's own.
    """
    env = facts.launch.env
    cfg = facts.launch.accelerate
    visible = facts.visible_gpus()
    asks: list[tuple[str, int, int | Unknown, str, Evidence]] = []  # launcher, processes, GPUs, setting, evidence
    if isinstance(cfg, AccelerateConfig) and cfg.num_processes:
        asks.append(("accelerate", cfg.num_processes, visible, f"num_processes in {cfg.path}",
                     observed(f"num_processes {cfg.num_processes}", source=cfg.path)))
    local = _int(env.get("LOCAL_WORLD_SIZE"))
    if local is not None and facts.launch.launcher == Launcher.TORCHRUN:
        asks.append(("torchrun", local, visible, "--nproc-per-node", observed(f"LOCAL_WORLD_SIZE={local}")))
    tasks = _int(env.get("SLURM_NTASKS_PER_NODE")) or _int(env.get("SLURM_TASKS_PER_NODE", "").split("(")[0])
    if tasks is not None and facts.launch.launcher == Launcher.SRUN:
        board = facts.hardware.gpus
        on_node = _int(env.get("SLURM_GPUS_ON_NODE"))
        node: int | Unknown = on_node if on_node is not None else (board if isinstance(board, Unknown) else len(board))
        asks.append(("srun", tasks, node, "--ntasks-per-node", observed(f"SLURM_NTASKS_PER_NODE={tasks}")))
    for launcher, processes, count, setting, seen in asks:
        if isinstance(count, Unknown) or processes <= count:
            continue
        yield found(
            matrix, TOO_MANY_PROCESSES,
            values={"launcher": launcher, "processes": processes, "count": count, "setting": setting},
            evidence=(seen, about(facts, "gpus", f"{count} GPUs")),
        )


def check_slurm_binding(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """GPUs bound per task (--gpus-per-task, --ntasks-per-gpu) under several tasks per node."""
    env = facts.launch.env
    if facts.launch.launcher != Launcher.SRUN:
        return
    tasks = _int(env.get("SLURM_NTASKS_PER_NODE")) or _int(env.get("SLURM_TASKS_PER_NODE", "").split("(")[0])
    binding = next((f"--{flag} ({name}={env[name]})" for name, flag in (
        ("SLURM_GPUS_PER_TASK", "gpus-per-task"), ("SLURM_NTASKS_PER_GPU", "ntasks-per-gpu")) if name in env), None)
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if tasks is None or tasks < 2 or binding is None or visible is None:
        return
    seen = len([e for e in visible.split(",") if e.strip()])
    if seen >= tasks:
        return
    yield found(
        matrix, SLURM_BINDING, values={"binding": binding},
        evidence=(observed(f"{tasks} tasks per node"), observed(binding),
                  observed(f"this task sees CUDA_VISIBLE_DEVICES={visible} ({seen} GPU)")),
    )


def check_visible_devices(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """CUDA_VISIBLE_DEVICES indices the driver does not have (UUIDs and MIG names are not judged)."""
    visible = facts.launch.env.get("CUDA_VISIBLE_DEVICES")
    gpus = facts.hardware.gpus
    if visible is None or isinstance(gpus, Unknown) or not gpus or "gpus" in facts.declared:
        return
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    indices = [_int(e) for e in entries]
    if not entries or any(i is None for i in indices):
        return
    beyond = [i for i in indices if i is not None and (i >= len(gpus) or i < 0)]
    if not beyond:
        return
    yield found(
        matrix, VISIBLE_BEYOND, values={"visible": f"CUDA_VISIBLE_DEVICES={visible}", "count": len(gpus)},
        evidence=(observed(f"CUDA_VISIBLE_DEVICES={visible}"),
                  observed(f"the driver reports {len(gpus)} GPU(s): indices 0-{len(gpus) - 1}")),
    )


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None
