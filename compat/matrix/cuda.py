"""CUDA toolkit ↔ NVIDIA Linux driver (matrix/cuda.toml).

Two NVIDIA rules meet here. Backward compatibility: a driver runs every CUDA runtime up to the
highest toolkit whose minimum driver it meets (what nvidia-smi prints as "CUDA Version").
Minor-version compatibility: a runtime packaged with an application (a torch wheel's
nvidia-cuda-runtime) also runs on any driver of its major family's floor, with a limited feature
set; it never crosses a major version.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from packaging.version import InvalidVersion, Version

from compat.matrix._toml import Table

_CUDA = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*$")

DriverSupport = Literal["full", "minor-compat", "no"]


@dataclass(frozen=True, kw_only=True)
class Toolkit:
    version: str
    """CUDA toolkit major.minor ("12.4")."""
    min_driver: Version
    """Minimum Linux driver for the full feature set (the x.y.0 runfile driver)."""
    source: str
    """Where the pairing was read (NVIDIA release notes, runfile name)."""
    max_gcc: int | None = None
    """Newest GCC major this toolkit's nvcc accepts as host compiler (crt/host_config.h); None: not curated."""

    @property
    def key(self) -> tuple[int, int]:
        return cuda_key(self.version)


@dataclass(frozen=True, kw_only=True)
class Family:
    major: int
    """CUDA major version (12)."""
    min_driver: Version
    """Minimum driver under minor-version compatibility (525.60.13 for 12.x)."""
    source: str
    """Where the floor was read (NVIDIA's CUDA compatibility guide)."""


def cuda_key(text: str) -> tuple[int, int]:
    """("12.4" | "12.4.1") → (12, 4); ValueError for anything else."""
    m = _CUDA.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a CUDA version (major.minor, e.g. 12.4)")
    return int(m.group(1)), int(m.group(2))


def driver_version(text: str) -> Version:
    """A driver version ("550.54.15") as a comparable Version; ValueError when malformed."""
    if not re.match(r"^\d+(\.\d+){1,3}$", text.strip()):
        raise ValueError(f"{text!r} is not a driver version (e.g. 550.54.15)")
    return Version(text.strip())


@dataclass(frozen=True, kw_only=True)
class CudaTable:
    toolkits: tuple[Toolkit, ...]
    """Oldest first."""
    families: tuple[Family, ...]
    """Oldest first."""

    def max_cuda(self, driver: str) -> str | None:
        """Highest CUDA toolkit (major.minor) whose full-feature minimum driver is <= `driver`.

        None when the driver is older than every curated toolkit; ValueError when `driver` is
        not a version.
        """
        have = driver_version(driver)
        best: Toolkit | None = None
        for tk in self.toolkits:
            if tk.min_driver <= have and (best is None or tk.key > best.key):
                best = tk
        return best.version if best else None

    def toolkit(self, cuda: str) -> Toolkit | None:
        key = cuda_key(cuda)
        return next((tk for tk in self.toolkits if tk.key == key), None)

    def min_driver(self, cuda: str) -> Version | None:
        """Full-feature minimum driver of a CUDA major.minor, None if not curated."""
        tk = self.toolkit(cuda)
        return tk.min_driver if tk else None

    def family(self, major: int) -> Family | None:
        return next((f for f in self.families if f.major == major), None)

    def driver_runs(self, driver: str, cuda: str) -> DriverSupport:
        """Whether a packaged CUDA `cuda` runtime (a torch wheel) runs on `driver`.

        "full" when the driver supports that CUDA outright, "minor-compat" when only NVIDIA's
        minor-version compatibility covers it (works, but no JIT of newer PTX: Triton and
        torch.compile kernels can fail), "no" otherwise ("driver too old").
        """
        have = driver_version(driver)
        want = cuda_key(cuda)
        top = self.max_cuda(driver)
        if top is not None and cuda_key(top) >= want:
            return "full"
        fam = self.family(want[0])
        if fam is not None and have >= fam.min_driver:
            return "minor-compat"
        return "no"


def _parse_cuda_text(t: Table, key: str) -> str:
    text = t.str(key)
    if not re.match(r"^\d+\.\d+$", text):
        t.fail(key, f"{text!r} is not a CUDA major.minor version (e.g. '12.4')")
    return text


def _parse_driver(t: Table, key: str) -> Version:
    text = t.str(key)
    try:
        return driver_version(text)
    except (ValueError, InvalidVersion):
        t.fail(key, f"{text!r} is not a driver version (e.g. '550.54.15')")


def row_location(row: Table) -> str:
    """"file: key" of a row, for an error that names where else a value is defined."""
    return f"{row.file}: {row.path}"


def load_cuda(tables: Sequence[Table]) -> CudaTable:
    """Toolkits and families from the shipped file and overlays; a row defined twice is an error."""
    toolkits: dict[tuple[int, int], tuple[Toolkit, Table]] = {}
    families: dict[int, tuple[Family, Table]] = {}
    for table in tables:
        table.only("toolkit", "family")
        for row in table.tables("toolkit", ()):
            row.only("version", "min_driver", "source", "max_gcc")
            tk = Toolkit(
                version=_parse_cuda_text(row, "version"),
                min_driver=_parse_driver(row, "min_driver"),
                source=row.str("source"),
                max_gcc=row.int("max_gcc", None),
            )
            if tk.key in toolkits:
                row.fail("version", f"CUDA {tk.version} is also defined at {row_location(toolkits[tk.key][1])}")
            toolkits[tk.key] = (tk, row)
        for row in table.tables("family", ()):
            row.only("major", "min_driver", "source")
            major = row.int("major")
            if major < 1:
                row.fail("major", f"{major} is not a CUDA major version")
            fam = Family(major=major, min_driver=_parse_driver(row, "min_driver"), source=row.str("source"))
            if major in families:
                row.fail("major", f"CUDA {major}.x is also defined at {row_location(families[major][1])}")
            families[major] = (fam, row)
    ordered = sorted(toolkits.values(), key=lambda pair: pair[0].key)
    # A newer toolkit never needs an older driver; a row that breaks this is a typo.
    for (prev, _), (cur, row) in itertools.pairwise(ordered):
        if cur.min_driver < prev.min_driver:
            row.fail("min_driver", f"{cur.min_driver} is older than CUDA {prev.version}'s {prev.min_driver}")
    return CudaTable(
        toolkits=tuple(tk for tk, _ in ordered),
        families=tuple(f for f, _ in sorted(families.values(), key=lambda pair: pair[0].major)),
    )
