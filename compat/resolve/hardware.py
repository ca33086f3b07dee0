"""The hardware a lock is resolved for: the GPU architectures and driver the torch build must fit."""

from __future__ import annotations

from dataclasses import dataclass

from compat.errors import UsageError
from compat.judge.torch_build import gpu_archs
from compat.matrix import Matrix
from compat.model.facts import Facts
from compat.model.lock import GpuCount, HardwareSummary, LockNote, LockNoteKind
from compat.model.unknown import Unknown


@dataclass(frozen=True, kw_only=True)
class TargetHardware:
    """The GPU facts the filters need, read once."""

    ccs: tuple[tuple[str, str], ...]
    """(compute capability, GPU name) of each distinct architecture, lowest first; empty without GPUs."""
    driver: str | None
    """Driver version; None without an NVIDIA driver (or when unknown, see `notes`)."""
    max_cuda: str | None
    """Highest CUDA the driver fully supports."""
    notes: tuple[LockNote, ...]
    """Facts that could not be checked."""
    summary: HardwareSummary
    """What the lock says it was resolved for."""


def target_hardware(facts: Facts, matrix: Matrix) -> TargetHardware:
    notes: list[LockNote] = []
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        notes.append(LockNote(kind=LockNoteKind.GPUS_UNKNOWN, reason=gpus.reason))
    else:
        notes.extend(
            LockNote(kind=LockNoteKind.GPU_ARCH_UNKNOWN, gpu_index=gpu.index, gpu=gpu.name)
            for gpu in gpus if isinstance(gpu.compute_capability, Unknown)
        )
    driver = facts.hardware.driver
    max_cuda = None
    if isinstance(driver, Unknown):
        notes.append(LockNote(kind=LockNoteKind.DRIVER_UNKNOWN, reason=driver.reason))
    elif driver is not None:
        try:
            max_cuda = matrix.cuda.max_cuda(driver)
        except ValueError as exc:
            raise UsageError(f"driver {driver!r}: {exc}") from exc
    return TargetHardware(
        ccs=gpu_archs(() if isinstance(gpus, Unknown) else gpus),
        driver=None if isinstance(driver, Unknown) else driver,
        max_cuda=max_cuda,
        notes=tuple(notes),
        summary=HardwareSummary(gpus=_count(facts), driver=driver, max_cuda=max_cuda),
    )


def _count(facts: Facts) -> tuple[GpuCount, ...] | Unknown:
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        return gpus
    counts: dict[tuple[str, str | None], int] = {}
    for gpu in gpus:
        cc = None if isinstance(gpu.compute_capability, Unknown) else gpu.compute_capability
        counts[(gpu.name, cc)] = counts.get((gpu.name, cc), 0) + 1
    # In the order of the label a person reads: the name, then its architecture (none first).
    order = sorted(counts, key=lambda k: (k[0], k[1] or ""))
    return tuple(GpuCount(name=name, compute_capability=cc, count=counts[(name, cc)]) for name, cc in order)
