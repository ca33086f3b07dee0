"""torch releases: CUDA variants and compiled architectures (matrix/torch.toml).

The binary-compatibility rule lives here: cubins built for sm_XY run on GPUs of the same major
with minor >= Y (sm_86 kernels run on an 8.9 L4), and PTX of the highest architecture is
JIT-compiled by the driver for any newer GPU. Anything else has "no kernel image".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.errors import MatrixError
from compat.matrix._toml import Table
from compat.matrix.cuda import cuda_key, row_location
from compat.model.torch_variant import TorchVariant
from compat.version_text import short

_CC = re.compile(r"^(\d+)\.(\d+)$")
_SM = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


@dataclass(frozen=True, kw_only=True)
class TorchRelease:
    version: str
    """Release version without local tag ("2.5.1")."""
    python: SpecifierSet
    """CPython versions with wheels (">=3.9,<3.14")."""
    default_variant: TorchVariant
    """What the public index installs on Linux x86_64 ("cu124")."""
    variants: tuple[TorchVariant, ...]
    """Variants on the PyTorch wheel index ("cu118", "cu121", "cu124", "cpu")."""
    cxx11_abi: bool
    """torch._C._GLIBCXX_USE_CXX11_ABI of the default build (compiled extensions must match)."""
    source: str
    """Where these facts were read (RELEASE.md, wheel metadata, upstream issues)."""

    @property
    def default_cuda(self) -> str | None:
        """CUDA major.minor of the default build ("12.4"); None for a CPU default."""
        return self.default_variant.cuda


@dataclass(frozen=True, kw_only=True)
class ArchList:
    torch: SpecifierSet
    """torch versions this row covers."""
    variant: TorchVariant
    """The wheel index variant ("cu128")."""
    archs: tuple[str, ...]
    """Compute capabilities with cubins ("7.5", "8.0", ...), lowest first."""
    ptx: bool
    """The highest arch also ships PTX, so newer GPUs can JIT it."""
    source: str
    """Where the list was read (build script, RELEASE.md, get_arch_list() output in an issue)."""


@dataclass(frozen=True, kw_only=True)
class TorchTable:
    releases: tuple[TorchRelease, ...]
    """Oldest first."""
    arch_lists: tuple[ArchList, ...]
    index_url_template: str = "https://download.pytorch.org/whl/{variant}"
    """PyTorch's own wheel index; {variant} is replaced by "cu124", "cpu", ..."""

    def release(self, version: str) -> TorchRelease | None:
        """The release of a version ("2.5.1+cu124" → 2.5.1), None if not curated or not a version."""
        public = _public(version)
        if public is None:
            return None
        return self._by_version.get(public)

    @functools.cached_property
    def _by_version(self) -> dict[Version, TorchRelease]:
        # Asked for each torch release a lock weighs, for each target: one lookup, not a parse of every release.
        out: dict[Version, TorchRelease] = {}
        for r in self.releases:
            out.setdefault(Version(r.version), r)
        return out

    def archs(self, version: str, variant: TorchVariant) -> ArchList | None:
        """The compiled architectures of one official Linux x86_64 build; None if not curated."""
        public = _public(version)
        if public is None:
            return None
        for row in self.arch_lists:
            if row.variant == variant and row.torch.contains(public, prereleases=True):
                return row
        return None

    def runs_on(self, version: str, variant: TorchVariant, cc: str) -> bool | None:
        """Whether that build has kernels for compute capability `cc`; None if not curated."""
        rel = self.release(version)
        if rel is None or variant not in rel.variants:
            return None
        if variant.cuda is None:
            return False  # a CPU (or non-CUDA) build has no CUDA kernels at all
        row = self.archs(version, variant)
        if row is None:
            return None
        cubins = [cc_key(a) for a in row.archs]
        ptx = [max(cubins)] if row.ptx and cubins else []
        return _covers(cubins, ptx, cc_key(cc))

    def index_url(self, variant: TorchVariant) -> str:
        """The PyTorch wheel index of a variant ("cu124" → .../whl/cu124)."""
        return self.index_url_template.format(variant=variant)


def cuda_variant(cuda: str) -> TorchVariant:
    """"12.4" (or "12.4.1") → cu124; ValueError when `cuda` is not a CUDA version."""
    major, minor = cuda_key(cuda)
    return TorchVariant.parse(f"cu{major}{minor}")


def arch_list_runs_on(arch_list: Iterable[str], cc: str) -> bool:
    """Whether a probed torch.cuda.get_arch_list() ("sm_90", "compute_90") has kernels for `cc`."""
    cubins: list[tuple[int, int]] = []
    exact: list[tuple[int, int]] = []
    ptx: list[tuple[int, int]] = []
    for entry in arch_list:
        m = _SM.match(entry.strip())
        if not m:
            continue
        digits = m.group(2)
        arch = (int(digits[:-1]), int(digits[-1]))
        if m.group(1) == "compute":
            ptx.append(arch)
        elif m.group(3) == "a":
            exact.append(arch)  # arch-specific (sm_90a) cubins run on that exact GPU only
        else:
            cubins.append(arch)
    want = cc_key(cc)
    return want in exact or _covers(cubins, ptx, want)


def _covers(cubins: Sequence[tuple[int, int]], ptx: Sequence[tuple[int, int]], cc: tuple[int, int]) -> bool:
    if any(major == cc[0] and minor <= cc[1] for major, minor in cubins):
        return True
    return any(arch <= cc for arch in ptx)


def sm(cc: str) -> str:
    """The architecture as CUDA names it ("9.0" -> "sm_90")."""
    return "sm_" + cc.replace(".", "")


def cc_key(text: str) -> tuple[int, int]:
    """"8.9" → (8, 9); ValueError for anything else."""
    m = _CC.match(text.strip())
    if not m:
        raise ValueError(f"{short(text)} is not a compute capability (e.g. 8.9)")
    return int(m.group(1)), int(m.group(2))


@functools.lru_cache(maxsize=4096)
def _public(version: str) -> Version | None:
    # Pure, and asked for the same few dozen torch versions by every build choice.
    try:
        return Version(Version(version).public)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return None


def _variants(t: Table) -> tuple[TorchVariant, ...]:
    labels = t.strs("variants")
    if not labels:
        t.fail("variants", "must list at least one variant")
    variants = []
    for i, v in enumerate(labels):
        found = TorchVariant.find(v)
        if found is None or found.label != v:
            t.fail(f"variants[{i}]", f"{v!r} is not a wheel index variant (cpu, cu124, rocm6.2, xpu)")
        variants.append(found)
    if len(set(variants)) != len(variants):
        t.fail("variants", "lists a variant twice")
    return tuple(variants)


def _parse_release(t: Table) -> TorchRelease:
    t.only("version", "python", "default", "variants", "cxx11_abi", "source")
    version = t.version("version")
    if version.local is not None:
        t.fail("version", f"'{version}' must not carry a local tag (+cu124): variants say that")
    variants = _variants(t)
    label = t.str("default")
    default = TorchVariant.find(label)
    if default is None or default not in variants:
        t.fail("default", f"{label!r} is not one of its variants ({', '.join(map(str, variants))})")
    return TorchRelease(
        version=str(version),
        python=t.specifier("python"),
        default_variant=default,
        variants=variants,
        cxx11_abi=t.bool("cxx11_abi"),
        source=t.str("source"),
    )


def _parse_arch_list(t: Table) -> ArchList:
    t.only("torch", "variant", "archs", "ptx", "source")
    label = t.str("variant")
    variant = TorchVariant.find(label)
    if variant is None or variant.cuda is None or variant.label != label:
        t.fail("variant", f"{label!r} is not a CUDA variant (cu118, cu124, ...)")
    archs = t.strs("archs")
    if not archs:
        t.fail("archs", "must list at least one compute capability")
    for i, arch in enumerate(archs):
        if not _CC.match(arch):
            t.fail(f"archs[{i}]", f"{short(arch)} is not a compute capability (e.g. '8.6')")
    return ArchList(
        torch=t.specifier("torch"),
        variant=variant,
        archs=tuple(sorted(set(archs), key=cc_key)),
        ptx=t.bool("ptx"),
        source=t.str("source"),
    )


def load_torch(tables: Sequence[Table]) -> TorchTable:
    """Releases, arch lists and the wheel index from the shipped file and overlays.

    A release or an [index] defined twice is an error, and so is a CUDA variant of a curated
    release that no arch_list row (or more than one) covers.
    """
    releases: dict[Version, tuple[TorchRelease, Table]] = {}
    rows: list[tuple[ArchList, Table]] = []
    index: tuple[str, Table] | None = None
    for table in tables:
        table.only("release", "arch_list", "index")
        for rt in table.tables("release", ()):
            rel = _parse_release(rt)
            key = Version(rel.version)
            if key in releases:
                rt.fail("version", f"torch {rel.version} is also defined at {row_location(releases[key][1])}")
            releases[key] = (rel, rt)
        for at in table.tables("arch_list", ()):
            rows.append((_parse_arch_list(at), at))
        if "index" in table:
            it = table.table("index")
            it.only("url", "source")
            url = it.str("url")
            if "{variant}" not in url:
                it.fail("url", "must contain {variant}")
            it.str("source")
            if index is not None:
                it.fail("", f"also defined at {row_location(index[1])}")
            index = (url, it)
    if index is None:
        raise MatrixError(tables[0].file if tables else "matrix/torch.toml", "index", "missing (the PyTorch wheel index URL)")
    for rel, rt in releases.values():
        version = Version(rel.version)
        for variant in rel.variants:
            if variant.cuda is None:
                continue
            covering = [(row, at) for row, at in rows if row.variant == variant and row.torch.contains(version, prereleases=True)]
            if not covering:
                rt.fail("variants", f"no [[arch_list]] row covers torch {rel.version} {variant}")
            if len(covering) > 1:
                covering[1][1].fail(
                    "torch", f"torch {rel.version} {variant} is also covered by {row_location(covering[0][1])}"
                )
    ordered = sorted(releases.items(), key=lambda item: item[0])
    return TorchTable(
        releases=tuple(rel for _, (rel, _) in ordered),
        arch_lists=tuple(row for row, _ in rows),
        index_url_template=index[0],
    )
