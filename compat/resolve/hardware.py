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
    cpu: bool = False
    """The target has no NVIDIA GPU (declared `--gpus cpu`, or a macOS target): torch's CPU build."""
    public_cpu: bool = False
    """The platform's public torch wheel is the CPU build (macOS, Windows)."""
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
    platform = facts.python.markers.get("sys_platform", "linux")
    return TargetHardware(
        cpu=platform == "darwin" or (not isinstance(gpus, Unknown) and not gpus and driver is None),
        public_cpu=platform in ("darwin", "win32"),
        ccs=gpu_archs(() if isinstance(gpus, Unknown) else gpus),
        driver=None if isinstance(driver, Unknown) else driver,
        max_cuda=max_cuda,
        notes=tuple(notes),
        summary=HardwareSummary(gpus=_count(facts), driver=driver, max_cuda=max_cuda),
    )


def lock_hardware(facts: Facts, matrix: Matrix) -> TargetHardware:
    """The hardware a lock is for, read once: raises UsageError unless the GPUs were declared or seen
    (`require_hardware`), or when the driver is not one the matrix can place."""
    require_hardware(facts)
    return target_hardware(facts, matrix)


def require_hardware(facts: Facts) -> None:
    """Raise UsageError unless the GPUs were declared or detected: a lock never assumes "no GPUs"."""
    gpus = facts.hardware.gpus
    if "gpus" in facts.declared or facts.python.markers.get("sys_platform") == "darwin":
        return
    if isinstance(gpus, Unknown) or not gpus:
        found = f"GPUs unknown: {gpus.reason}" if isinstance(gpus, Unknown) else "no NVIDIA GPU detected"
        raise UsageError(
            f"{found}; declare the machine the lock is for (--gpus 8xH100 --driver 550.54.15), "
            "or --gpus cpu for a CPU-only set"
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
