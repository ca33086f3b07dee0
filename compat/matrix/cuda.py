"""CUDA toolkit ↔ NVIDIA Linux driver (matrix/cuda.toml). STUB: interface fixed, body to be completed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import Version

from compat.matrix._toml import Table


@dataclass(frozen=True, kw_only=True)
class Toolkit:
    version: str
    """CUDA toolkit major.minor ("12.4")."""
    min_driver: Version
    """Minimum Linux driver for the full feature set (the x.y.0 runfile driver)."""
    source: str


@dataclass(frozen=True, kw_only=True)
class Family:
    major: int
    """CUDA major version (12)."""
    min_driver: Version
    """Minimum driver under minor-version compatibility (525.60.13 for 12.x)."""
    source: str


@dataclass(frozen=True, kw_only=True)
class CudaTable:
    toolkits: tuple[Toolkit, ...]
    families: tuple[Family, ...]

    def max_cuda(self, driver: str) -> str | None:
        """Highest CUDA toolkit (major.minor) whose full-feature minimum driver is <= `driver`."""
        raise NotImplementedError

    def min_driver(self, cuda: str) -> Version | None:
        """Full-feature minimum driver of a CUDA major.minor, None if not curated."""
        raise NotImplementedError

    def family(self, major: int) -> Family | None:
        raise NotImplementedError


def load_cuda(tables: Sequence[Table]) -> CudaTable:
    raise NotImplementedError
