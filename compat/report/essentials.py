"""The environment header, in one place: the few lines a maintainer asks for first (Python, OS, torch build,
driver, GPUs, launcher, script, the tracked stack). `compat doctor`'s text report, the Markdown block
(`compat report`) and `compat facts --short` all show these rows, so they cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat.matrix.torch import sm
from compat.model.facts import AccelerateConfig, Facts, Interconnect, System, TorchBuild
from compat.model.findings import Fix
from compat.model.unknown import Unknown

STACK = ("trl", "vllm", "torch", "transformers", "accelerate", "peft", "deepspeed", "flash-attn",
         "bitsandbytes", "liger-kernel", "datasets")
"""The tracked packages the `stack` row names, in this order (the rest only count in `packages`)."""


def essentials(facts: Facts) -> list[tuple[str, str]]:
    """(label, value) rows, in the order people read them."""
    py = facts.python
    plat = f"{py.markers.get('sys_platform', '?')} {py.markers.get('platform_machine', '?')}"
    glibc = f" · glibc {py.glibc}" if isinstance(py.glibc, str) else ""
    rows = [("Python", f"{py.version} ({py.implementation}) · {plat}{glibc}")]
    if isinstance(facts.system, System) and isinstance(facts.system.os, str):
        rows.append(("OS", facts.system.os))
    rows.append(("torch", torch_line(facts)))
    hw = facts.hardware
    declared = lambda name: " (declared)" if name in facts.declared else ""  # noqa: E731
    if hw.driver is None:
        rows.append(("driver", "none (no NVIDIA driver found)"))
    else:
        cuda = f" · CUDA <= {hw.driver_cuda}" if isinstance(hw.driver_cuda, str) else ""
        rows.append(("driver", f"{known(hw.driver)}{declared('driver')}{cuda}"))
    rows.append(("GPUs", gpu_line(facts) + declared("gpus")))
    rows.append(("launch", _launch_line(facts)))
    if facts.script is not None:
        s = facts.script
        rows.append(("script", f"{s.path}: {s.parse_error or (', '.join(s.trainers) or 'no trainer classes')}"))
    rows.append(("stack", stack_line(facts)))
    packages = facts.packages
    rows.append(("packages", str(packages) if isinstance(packages, Unknown) else f"{len(packages)} installed"))
    return rows


def render_short(facts: Facts) -> str:
    """`compat facts --short`: the essentials as aligned `label  value` lines."""
    rows = essentials(facts)
    width = max(len(label) for label, _ in rows)
    return "".join(f"{label.ljust(width)}  {value}\n" for label, value in rows)


def known(value: object, fmt: Callable[[Any], str] = str) -> str:
    """`value` in words, or the reason it is unknown."""
    return str(value) if isinstance(value, Unknown) else fmt(value)


def _launch_line(facts: Facts) -> str:
    launch = facts.launch
    text = known(launch.launcher) + (" (declared)" if "launcher" in facts.declared else "")
    cfg = launch.accelerate
    if isinstance(cfg, AccelerateConfig):
        text += (f" · accelerate {cfg.distributed_type or 'NO'}, {cfg.num_processes or '?'} processes,"
                 f" {cfg.mixed_precision or 'no'} precision ({cfg.path})")
    elif isinstance(cfg, Unknown):  # a config that exists but cannot be read decides nothing: say so, not nothing
        text += f" · accelerate config {cfg}"
    if launch.container:
        text += f" · in {launch.container}"
    return text


def torch_line(facts: Facts) -> str:
    torch = facts.torch
    if torch is None:
        return "not installed"
    if isinstance(torch, Unknown):
        return str(torch)
    assert isinstance(torch, TorchBuild)
    if torch.cuda is None:
        detail = "CPU-only build"
    else:
        parts = [f"CUDA {known(torch.cuda)}"]
        if isinstance(torch.cudnn, str):
            parts.append(f"cuDNN {torch.cudnn}")
        if isinstance(torch.nccl, str):
            parts.append(f"NCCL {torch.nccl}")
        if isinstance(torch.arch_list, tuple) and torch.arch_list:
            parts.append(f"archs {' '.join(torch.arch_list)}")
        detail = ", ".join(parts)
    # Its files say what its import says: only a build read another way (metadata, declared) is noted.
    note = f" · from {torch.source.value}" if torch.source.value not in ("import", "files") else ""
    return f"{torch.version} ({detail}){note}"


def gpu_line(facts: Facts) -> str:
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        return str(gpus)
    if not gpus:
        return "none"
    groups: dict[str, int] = {}
    for g in gpus:
        cc = g.compute_capability
        mem = f", {round(g.memory_mib / 1024)} GiB" if isinstance(g.memory_mib, int) else ""
        label = f"{g.name} ({sm(cc)}{mem})" if isinstance(cc, str) else g.name
        groups[label] = groups.get(label, 0) + 1
    text = ", ".join(f"{n} × {label}" for label, n in groups.items())
    links = facts.hardware.links
    if isinstance(links, tuple) and links:
        kinds = {link.interconnect for link in links}
        text += " · NVLink" if kinds == {Interconnect.NVLINK} else " · PCIe" if Interconnect.NVLINK not in kinds else " · mixed NVLink/PCIe"
    return text


def stack_line(facts: Facts) -> str:
    if isinstance(facts.packages, Unknown):
        return str(facts.packages)
    have = {d.name: d.version for d in facts.packages}
    shown = [f"{name} {have[name]}" for name in STACK if name in have]
    return " · ".join(shown) if shown else "none of the tracked packages are installed"


def fix_text(fix: Fix) -> str:
    """A fix in one sentence or two: the requirements that clear it, then the advice."""
    parts = []
    if fix.requires:
        parts.append(f"requires {', '.join(fix.requires)}.")
    if fix.advice:
        parts.append(fix.advice)
    return " ".join(parts)
