"""GPU models (matrix/gpus.toml). STUB: interface fixed, body to be completed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compat.matrix._toml import Table


@dataclass(frozen=True, kw_only=True)
class GpuModel:
    name: str
    """Canonical short name used in --gpus ("H100", "A100-80GB", "RTX5090")."""
    aliases: tuple[str, ...]
    """Other names, including what the driver reports ("NVIDIA H100 80GB HBM3")."""
    compute_capability: str
    memory_gib: int
    interconnect: str
    """"nvlink" when the usual board (SXM) links GPUs with NVLink, else "pcie"."""
    consumer: bool
    """GeForce / workstation boards: no P2P over PCIe on many platforms."""
    source: str


@dataclass(frozen=True, kw_only=True)
class GpuTable:
    models: tuple[GpuModel, ...]

    def find(self, name: str) -> GpuModel | None:
        """The model a declared or reported name refers to (case, spaces, "NVIDIA"/"GeForce" ignored)."""
        raise NotImplementedError


def load_gpus(tables: Sequence[Table]) -> GpuTable:
    raise NotImplementedError
