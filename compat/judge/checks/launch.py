"""How training is started against how many GPUs it will see."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import cannot_check, declared_note, found
from compat.matrix import Matrix
from compat.model.facts import AccelerateConfig, Facts, Launcher
from compat.model.findings import Finding
from compat.model.unknown import Unknown

NO_LAUNCHER = "multi-gpu-without-launcher"
TOO_MANY_PROCESSES = "more-processes-than-gpus"

OWNS = {
    NO_LAUNCHER: frozenset({"count"}),
    TOO_MANY_PROCESSES: frozenset({"processes", "count", "config"}),
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
            evidence=(f"launcher python{declared_note(facts, 'launcher')}", f"{count} visible GPUs{declared_note(facts, 'gpus')}"),
        )
    cfg = facts.launch.accelerate
    if isinstance(cfg, AccelerateConfig) and cfg.num_processes and cfg.num_processes > count:
        yield found(
            matrix, TOO_MANY_PROCESSES, values={"processes": cfg.num_processes, "count": count, "config": cfg.path},
            evidence=(f"{cfg.path}: num_processes {cfg.num_processes}", f"{count} visible GPUs"),
        )
