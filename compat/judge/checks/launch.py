"""How training is started against how many GPUs it will see."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import legacy_cannot_check, declared_note
from compat.model.facts import AccelerateConfig, Facts, Launcher
from compat.model.findings import Finding, Fix, Severity, Status
from compat.matrix import Matrix
from compat.model.unknown import Unknown


def check_launcher(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    fid, title = "multi-gpu-without-launcher", "Several GPUs are used through a distributed launcher"
    count = facts.visible_gpus()
    if isinstance(count, Unknown) or count < 2:
        return
    launcher = facts.launch.launcher
    if isinstance(launcher, Unknown):
        yield legacy_cannot_check(fid, Severity.WARNING, title, f"launcher: {launcher.reason}")
    elif launcher == Launcher.PYTHON:
        yield Finding(
            id=fid,
            severity=Severity.WARNING,
            status=Status.FOUND,
            title=f"Plain `python` on a machine with {count} visible GPUs: Trainer falls back to nn.DataParallel",
            cause="Without a distributed launcher, transformers' Trainer sees n_gpu > 1 and wraps the model in "
            "nn.DataParallel: one process drives every GPU (slow), and trainers that read `.config` from the "
            "wrapped model break (`'DataParallel' object has no attribute 'config'`).",
            fix=Fix(advice=f"Start with `accelerate launch` or `torchrun --nproc-per-node {count}`, or expose one GPU "
                    "with CUDA_VISIBLE_DEVICES=0."),
            evidence=(f"launcher python{declared_note(facts, 'launcher')}", f"{count} visible GPUs{declared_note(facts, 'gpus')}"),
            refs=("huggingface/trl#3063", "huggingface/trl#3225"),
        )
    cfg = facts.launch.accelerate
    if isinstance(cfg, AccelerateConfig) and cfg.num_processes and cfg.num_processes > count:
        yield Finding(
            id="more-processes-than-gpus",
            severity=Severity.WARNING,
            status=Status.FOUND,
            title=f"accelerate starts {cfg.num_processes} processes for {count} visible GPUs",
            cause="Two ranks end up on one GPU: NCCL refuses it (`Duplicate GPU detected`) or tensors land on "
            "two devices.",
            fix=Fix(advice=f"Set num_processes to {count} (or fewer) in {cfg.path}."),
            evidence=(f"{cfg.path}: num_processes {cfg.num_processes}", f"{count} visible GPUs"),
            refs=("NVIDIA/nccl#286",),
        )
