"""Small helpers shared by the checks."""

from __future__ import annotations

from compat.model.facts import Facts, Gpu
from compat.model.findings import Finding, Fix, Severity, Status
from compat.model.unknown import Unknown


def cannot_check(fid: str, severity: Severity, title: str, why: str | Unknown, *refs: str) -> Finding:
    reason = why.reason if isinstance(why, Unknown) else why
    return Finding(
        id=fid,
        severity=severity,
        status=Status.CANNOT_CHECK,
        title=title,
        cause="",
        fix=Fix(),
        unknown=(reason,),
        refs=tuple(refs),
    )


def declared_note(facts: Facts, name: str) -> str:
    return " (declared)" if name in facts.declared else ""


def gpu_label(gpu: Gpu) -> str:
    cc = gpu.compute_capability
    sm = f"sm_{cc.replace('.', '')}" if isinstance(cc, str) else "sm_?"
    return f"{gpu.name} ({sm})"


def distinct_gpus(gpus: tuple[Gpu, ...]) -> tuple[Gpu, ...]:
    """One GPU per model: findings about a model should not repeat for each of its eight boards."""
    seen: dict[tuple[str, str], Gpu] = {}
    for gpu in gpus:
        seen.setdefault((gpu.name, str(gpu.compute_capability)), gpu)
    return tuple(seen.values())
