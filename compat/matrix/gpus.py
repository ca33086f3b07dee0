"""GPU models (matrix/gpus.toml): what a declared or reported GPU name means.

Names are matched loosely because the same board is spelled many ways: "H100", "h100-sxm",
"NVIDIA H100 80GB HBM3". Case, spaces, hyphens, underscores and the words NVIDIA, GeForce and
Tesla are ignored; a reported name that only contains a known name ("NVIDIA GeForce RTX 4090 D")
matches it on whole words, the longest known name winning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from compat.matrix._toml import Table
from compat.matrix.cuda import row_location
from compat.version_text import short

INTERCONNECTS = ("nvlink", "nvlink-bridge", "pcie")
_NOISE = frozenset({"nvidia", "geforce", "tesla"})
_CC = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True, kw_only=True)
class GpuModel:
    name: str
    """Canonical short name used in --gpus ("H100", "A100-80GB", "RTX5090")."""
    aliases: tuple[str, ...]
    """Other names, including what the driver reports ("NVIDIA H100 80GB HBM3")."""
    compute_capability: str
    """"9.0" for Hopper, "12.0" for consumer Blackwell."""
    memory_gib: int
    """Marketed memory size (the driver reports slightly less)."""
    interconnect: str
    """"nvlink" when the usual board (SXM) links every GPU pair with NVLink, "nvlink-bridge" when
    bridges link pairs only (NVL cards), else "pcie"."""
    consumer: bool
    """GeForce / workstation boards: no P2P over PCIe on many platforms."""
    source: str
    """Where the facts were read (NVIDIA's CUDA GPUs table, product pages)."""
    nvlinks: int = 0
    """NVLink lanes between two GPUs of the usual board (H100 SXM: 18); 0 when not curated."""
    note: str = ""
    """A caveat a person should see when this model is declared ("memory size assumed")."""


def _tokens(name: str) -> tuple[str, ...]:
    words = re.split(r"[\s\-_/]+", name.lower())
    return tuple(w for w in words if w and w not in _NOISE)


def compact(name: str) -> str:
    """The form names are compared in: "NVIDIA GeForce RTX-4090" → "rtx4090"."""
    return "".join(_tokens(name))


@dataclass(frozen=True, kw_only=True)
class GpuTable:
    models: tuple[GpuModel, ...]

    @cached_property
    def _keys(self) -> dict[str, GpuModel]:
        keys: dict[str, GpuModel] = {}
        for model in self.models:
            for name in (model.name, *model.aliases):
                keys.setdefault(compact(name), model)
        return keys

    def find(self, name: str) -> GpuModel | None:
        """The model a declared or reported name refers to (case, spaces, "NVIDIA"/"GeForce" ignored)."""
        keys = self._keys
        tokens = _tokens(name)
        whole = "".join(tokens)
        if not whole:
            return None
        if whole in keys:
            return keys[whole]
        # A name with extra words ("NVIDIA H100 80GB HBM3e XL"): try every run of whole words.
        best: tuple[int, GpuModel] | None = None
        for i in range(len(tokens)):
            for j in range(i + 1, len(tokens) + 1):
                run = "".join(tokens[i:j])
                model = keys.get(run)
                if model is not None and (best is None or len(run) > best[0]):
                    best = (len(run), model)
        return best[1] if best else None

    def names(self) -> tuple[str, ...]:
        """Canonical names, for suggestions and help text."""
        return tuple(m.name for m in self.models)


def _parse_gpu(t: Table) -> GpuModel:
    t.only("name", "aliases", "compute_capability", "memory_gib", "interconnect", "consumer", "nvlinks", "note", "source")
    name = t.str("name")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9-]*$", name):
        t.fail("name", f"{name!r} must be letters, digits and hyphens (it is typed in --gpus 8x{name})")
    cc = t.str("compute_capability")
    if not _CC.match(cc):
        t.fail("compute_capability", f"{short(cc)} is not a compute capability (e.g. '8.9')")
    memory = t.int("memory_gib")
    if memory <= 0:
        t.fail("memory_gib", f"{memory} must be positive")
    interconnect = t.str("interconnect")
    if interconnect not in INTERCONNECTS:
        t.fail("interconnect", f"{interconnect!r} is not one of {', '.join(INTERCONNECTS)}")
    nvlinks = t.int("nvlinks", 0)
    if nvlinks < 0 or (nvlinks and interconnect == "pcie"):
        t.fail("nvlinks", f"{nvlinks} does not fit interconnect {interconnect!r}")
    return GpuModel(
        name=name,
        aliases=t.strs("aliases", ()),
        compute_capability=cc,
        memory_gib=memory,
        interconnect=interconnect,
        consumer=t.bool("consumer"),
        source=t.str("source"),
        nvlinks=nvlinks,
        note=t.str("note", None) or "",
    )


def load_gpus(tables: Sequence[Table]) -> GpuTable:
    """GPU models from the shipped file and overlays; a name or alias that two models share is an error."""
    models: list[GpuModel] = []
    owner: dict[str, tuple[GpuModel, Table]] = {}
    for table in tables:
        table.only("gpu")
        for gt in table.tables("gpu", ()):
            model = _parse_gpu(gt)
            for i, spelled in enumerate((model.name, *model.aliases)):
                key = compact(spelled)
                field = "name" if i == 0 else f"aliases[{i - 1}]"
                if not key:
                    gt.fail(field, f"{spelled!r} has nothing left to match once NVIDIA/GeForce/Tesla are ignored")
                seen = owner.get(key)
                if seen is not None and seen[0] is not model:
                    gt.fail(field, f"{spelled!r} also names {seen[0].name} at {row_location(seen[1])}")
                owner[key] = (model, gt)
            models.append(model)
    return GpuTable(models=tuple(models))
