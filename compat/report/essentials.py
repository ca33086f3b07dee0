"""The few lines a maintainer asks for first (Python, platform, torch build, driver, GPUs, launcher,
the tracked stack): shared by `compat facts --short` and the Markdown report."""

from __future__ import annotations

from compat.model.facts import AccelerateConfig, Facts, System
from compat.model.findings import Fix
from compat.model.unknown import Unknown
from compat.report.doctor import _gpu_line, _known, _stack_line, _torch_line


def essentials(facts: Facts) -> list[tuple[str, str]]:
    """(label, value) rows, in the order people read them."""
    py = facts.python
    plat = f"{py.markers.get('sys_platform', '?')} {py.markers.get('platform_machine', '?')}"
    glibc = f" · glibc {py.glibc}" if isinstance(py.glibc, str) else ""
    rows = [("Python", f"{py.version} ({py.implementation}) · {plat}{glibc}")]
    if isinstance(facts.system, System) and isinstance(facts.system.os, str):
        rows.append(("OS", facts.system.os))
    rows.append(("torch", _torch_line(facts)))
    hw = facts.hardware
    declared = lambda name: " (declared)" if name in facts.declared else ""  # noqa: E731
    if hw.driver is None:
        rows.append(("driver", "none (no NVIDIA driver found)"))
    else:
        cuda = f" · CUDA <= {hw.driver_cuda}" if isinstance(hw.driver_cuda, str) else ""
        rows.append(("driver", f"{_known(hw.driver)}{declared('driver')}{cuda}"))
    rows.append(("GPUs", _gpu_line(facts) + declared("gpus")))
    launch = facts.launch
    launcher = _known(launch.launcher) + declared("launcher")
    cfg = launch.accelerate
    if isinstance(cfg, AccelerateConfig):
        launcher += (
            f" · accelerate {cfg.distributed_type or 'NO'}, {cfg.num_processes or '?'} processes,"
            f" {cfg.mixed_precision or 'no'} precision"
        )
    if launch.container:
        launcher += f" · in {launch.container}"
    rows.append(("launch", launcher))
    rows.append(("stack", _stack_line(facts)))
    packages = facts.packages
    rows.append(("packages", str(packages) if isinstance(packages, Unknown) else f"{len(packages)} installed"))
    return rows


def render_short(facts: Facts) -> str:
    """`compat facts --short`: the essentials as aligned `label  value` lines."""
    rows = essentials(facts)
    width = max(len(label) for label, _ in rows)
    return "".join(f"{label.ljust(width)}  {value}\n" for label, value in rows)


def fix_text(fix: Fix) -> str:
    """A fix in one sentence or two: the requirements that clear it, then the advice."""
    parts = []
    if fix.requires:
        parts.append(f"requires {', '.join(fix.requires)}.")
    if fix.advice:
        parts.append(fix.advice)
    return " ".join(parts)
