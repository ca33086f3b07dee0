"""torch releases: CUDA variants and compiled architectures (matrix/torch.toml). STUB."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet

from compat.matrix._toml import Table


@dataclass(frozen=True, kw_only=True)
class TorchRelease:
    version: str
    """Release version without local tag ("2.5.1")."""
    python: SpecifierSet
    """CPython versions with wheels ("">=3.9,<3.14")."""
    default_variant: str
    """What the public index installs on Linux x86_64 ("cu124")."""
    variants: tuple[str, ...]
    """Variants on the PyTorch wheel index ("cu118", "cu121", "cu124", "cpu")."""
    source: str


@dataclass(frozen=True, kw_only=True)
class ArchList:
    torch: SpecifierSet
    """torch versions this row covers."""
    variant: str
    archs: tuple[str, ...]
    """Compute capabilities with cubins ("7.5", "8.0", ...)."""
    ptx: bool
    """The highest arch also ships PTX, so newer GPUs can JIT it."""
    source: str


@dataclass(frozen=True, kw_only=True)
class TorchTable:
    releases: tuple[TorchRelease, ...]
    arch_lists: tuple[ArchList, ...]

    def release(self, version: str) -> TorchRelease | None:
        """The release of a version ("2.5.1+cu124" → 2.5.1), None if not curated."""
        raise NotImplementedError

    def archs(self, version: str, variant: str) -> ArchList | None:
        raise NotImplementedError

    def runs_on(self, version: str, variant: str, cc: str) -> bool | None:
        """Whether that build has kernels for compute capability `cc`; None if not curated."""
        raise NotImplementedError


def load_torch(tables: Sequence[Table]) -> TorchTable:
    raise NotImplementedError
