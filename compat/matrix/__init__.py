"""The curated matrix: typed, validated, loaded from matrix/ plus any overlays.

`load_matrix()` reads the shipped directory (inside the wheel as compat/_matrix, or matrix/
at the top of a source checkout) and then each overlay directory (`--matrix DIR`,
`COMPAT_MATRIX`), so a company can add its own GPUs, signatures and stacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compat.errors import MatrixError
from compat.matrix._toml import Table, read_toml
from compat.matrix.builds import BuildTable, load_builds
from compat.matrix.cuda import CudaTable, load_cuda
from compat.matrix.extensions import ExtensionTable, load_extensions
from compat.matrix.gpus import GpuTable, load_gpus
from compat.matrix.releases import ReleaseIndex
from compat.matrix.signatures import Signature, load_signatures
from compat.matrix.stacks import StackTable, load_stacks
from compat.matrix.torch import TorchTable, load_torch

__all__ = ["Matrix", "Signature", "load_matrix", "shipped_matrix_dir"]


@dataclass(frozen=True, kw_only=True)
class Matrix:
    cuda: CudaTable
    """CUDA toolkit ↔ NVIDIA driver."""
    torch: TorchTable
    """torch releases: CUDA variants, default variant, Pythons, compiled architectures."""
    gpus: GpuTable
    """GPU models: compute capability, memory, interconnect."""
    extensions: ExtensionTable
    """Packages that compile against torch (flash-attn): which torch, CUDA and Python their wheels cover."""
    releases: ReleaseIndex
    """Every release of the tracked packages with its declared requirements (loaded lazily)."""
    signatures: tuple[Signature, ...]
    """The known-failure catalog."""
    roots: tuple[Path, ...]
    """The directories this matrix was read from, shipped one first."""
    stacks: StackTable = field(default_factory=StackTable)
    """Sets upstream projects pinned and ran together (matrix/stacks.toml)."""
    builds: BuildTable = field(default_factory=BuildTable)
    """Other CUDA builds of packages whose default-index wheel has one (vLLM's +cu118, matrix/builds.toml)."""

    def signature(self, sid: str) -> Signature | None:
        return next((s for s in self.signatures if s.id == sid), None)


def shipped_matrix_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    installed = here / "_matrix"
    if installed.is_dir():
        return installed
    return here.parent / "matrix"  # a source checkout or an editable install


def file_label(root: Path, path: Path, shipped: bool) -> str:
    """How errors name a matrix file: matrix/<path> when shipped, the path as given for an overlay."""
    rel = path.relative_to(root).as_posix()
    return f"matrix/{rel}" if shipped else str(path)


def load_matrix(overlays: Sequence[Path] = (), *, base: Path | None = None, cache_dir: Path | None = None) -> Matrix:
    """Load and validate the shipped matrix and the overlays; raises MatrixError.

    `cache_dir` (compat's cache, from compat.sources.settings) memoises the compiled matrix (compat.matrix.compiled)
    and the parsed release files; None parses everything.
    """
    base = base or shipped_matrix_dir()
    roots = (base, *overlays)
    for root in roots:
        if not root.is_dir():
            raise MatrixError(str(root), "", "not a directory")
    if overlays:
        from compat.matrix.overlay import check_overlay

        for root in overlays:
            check_overlay(root)
    shipped = not overlays and base == shipped_matrix_dir()
    stamp = _stamp(base) if shipped else None
    if stamp is not None and stamp in _SHIPPED:
        return dataclasses.replace(_SHIPPED[stamp], releases=_releases(roots, cache_dir))
    if cache_dir is None:
        from compat.matrix.compiled import load_shipped

        matrix = load_shipped(roots, lambda: _releases(roots, cache_dir)) or _load(roots, cache_dir)
    else:
        from compat.matrix.compiled import load_compiled

        matrix = load_compiled(roots, cache_dir, lambda: _load(roots, cache_dir), lambda: _releases(roots, cache_dir))
    if stamp is not None:
        _SHIPPED.clear()
        _SHIPPED[stamp] = matrix
    return matrix


_SHIPPED: dict[tuple[tuple[str, int, int], ...], Matrix] = {}
"""The shipped matrix as this process parsed it, under the stamp of its files: a process that judges many
environments (a fleet, a library caller, the test suite) parses it once. Each load gets its own release index."""


def _stamp(root: Path) -> tuple[tuple[str, int, int], ...] | None:
    """The name, size and modification time of every curated file the loader reads (None when one cannot be read):
    a file edited while the process runs gives a new stamp."""
    try:
        return tuple((p.name, (s := p.stat()).st_size, s.st_mtime_ns)
                     for p in sorted([*root.glob("*.toml"), *(root / "signatures").glob("*.toml")]))
    except OSError:
        return None


def _releases(roots: tuple[Path, ...], cache_dir: Path | None) -> ReleaseIndex:
    return ReleaseIndex(tuple(root / "releases" for root in roots), cache_dir=cache_dir)


TABLE_FILES = ("cuda.toml", "torch.toml", "gpus.toml", "extensions.toml", "stacks.toml", "builds.toml")
"""The single files a matrix root holds and the loader reads (signatures/ and releases/ are folders)."""
_OPTIONAL = ("extensions.toml", "stacks.toml", "builds.toml")
"""Those the shipped matrix may lack."""


def _load(roots: tuple[Path, ...], cache_dir: Path | None) -> Matrix:
    per_file: dict[str, list[Table]] = {name: [] for name in TABLE_FILES}
    signature_files: list[tuple[Table, str]] = []
    for i, root in enumerate(roots):
        for name, tables in per_file.items():
            path = root / name
            if path.is_file():
                tables.append(read_toml(path, label=file_label(root, path, i == 0)))
        sig_dir = root / "signatures"
        if sig_dir.is_dir():
            for path in sorted(sig_dir.glob("*.toml")):
                signature_files.append((read_toml(path, label=file_label(root, path, i == 0)), path.stem))
    for name, tables in per_file.items():
        if not tables and name not in _OPTIONAL:
            raise MatrixError(f"matrix/{name}", "", "missing from the shipped matrix")
    return Matrix(
        cuda=load_cuda(per_file["cuda.toml"]),
        torch=load_torch(per_file["torch.toml"]),
        gpus=load_gpus(per_file["gpus.toml"]),
        extensions=load_extensions(per_file["extensions.toml"]),
        releases=_releases(roots, cache_dir),
        signatures=load_signatures(signature_files),
        roots=roots,
        stacks=load_stacks(per_file["stacks.toml"]),
        builds=load_builds(per_file["builds.toml"]),
    )
