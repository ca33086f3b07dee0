"""The compatibility tables people ask for, read off the matrix: which TRL, vLLM, torch, CUDA and
driver go together; which GPU architectures each torch build has kernels for; which torch each
prebuilt extension wheel (flash-attn) covers. Rows are records; compat/report/site.py words them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from compat.matrix import Matrix
from compat.matrix.cuda import cuda_key
from compat.matrix.torch import cc_key

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@dataclass(frozen=True, kw_only=True)
class StackRow:
    """One vLLM release with the torch it pins, that torch's CUDA builds and the TRL releases whose
    [vllm] extra accepts it."""

    vllm: str
    """The vLLM release."""
    torch: str | None
    """The torch version its wheels pin (`torch==X`); None when it declares no exact pin."""
    trl: tuple[str, ...]
    """TRL releases whose `trl[vllm]` extra accepts this vLLM, oldest first."""
    trl_spans: tuple[tuple[str, str], ...]
    """The same as runs of consecutive TRL releases: (first, last), oldest first."""
    cuda_default: str | None
    """CUDA of the torch build the public index installs ("12.4"); None for a CPU default or no pin."""
    cuda_builds: tuple[str, ...]
    """CUDA versions of every torch build on PyTorch's own index, lowest first."""
    min_driver: str | None
    """Oldest Linux driver that runs the default build fully; None when unknown."""
    min_driver_compat: str | None
    """Oldest driver that runs it under CUDA minor-version compatibility."""


@dataclass(frozen=True, kw_only=True)
class BuildRow:
    """One official torch build (release × CUDA variant) and its compiled GPU architectures."""

    torch: str
    variant: str
    """The wheel index variant ("cu124")."""
    archs: tuple[str, ...]
    """Compute capabilities with cubins, lowest first; empty when not curated."""
    ptx: bool
    """The highest arch also ships PTX (newer GPUs can JIT it)."""
    default: bool
    """This is the build the public index installs."""
    min_driver: str | None
    """Oldest driver that runs the build fully."""


@dataclass(frozen=True, kw_only=True)
class WheelRow:
    """One curated row of a compiled extension's prebuilt wheels."""

    package: str
    versions: tuple[str, ...]
    """Extension releases the row covers."""
    torch: str
    """torch specifier with wheels (">=2.4,<2.9")."""
    torch_minors: tuple[str, ...]
    """Curated torch minors ("2.5") whose .0 release the specifier accepts."""
    python: str
    cuda_majors: tuple[int, ...]
    min_compute_capability: str | None
    source: str


def stack_rows(m: Matrix) -> tuple[StackRow, ...]:
    """Newest vLLM first."""
    vllm = m.releases.get("vllm")
    trl = m.releases.get("trl")
    if vllm is None:
        return ()
    extras = []
    for rel in trl.releases if trl else ():
        wanted = [r for r in rel.requires_of("vllm") if r.marker is not None and r.marker.evaluate({**_LINUX, "extra": "vllm"})]
        if wanted:
            extras.append((str(rel.version), wanted[0].specifier))
    rows = []
    for rel in reversed(vllm.releases):
        if rel.yanked:
            continue
        pins = [str(s.version) for r in rel.requires_of("torch") if r.marker is None or r.marker.evaluate(_LINUX)
                for s in r.specifier if s.operator == "=="]
        torch = pins[0] if pins else None
        tr = m.torch.release(torch) if torch else None
        builds = sorted({c for v in (tr.variants if tr else ()) if (c := v.cuda)}, key=cuda_key)
        default = tr.default_cuda if tr else None
        floor = m.cuda.min_driver(default) if default else None
        family = m.cuda.family(cuda_key(default)[0]) if default else None
        rows.append(StackRow(
            vllm=str(rel.version),
            torch=torch,
            trl=tuple(v for v, spec in extras if spec.contains(rel.version, prereleases=True)),
            trl_spans=_spans([(v, spec.contains(rel.version, prereleases=True)) for v, spec in extras]),
            cuda_default=default,
            cuda_builds=tuple(builds),
            min_driver=_driver(floor),
            min_driver_compat=_driver(family.min_driver) if family else None,
        ))
    return tuple(rows)


# Fixed, not this interpreter's: the tables describe Linux x86_64 CPython 3.12 whoever builds them.
def _spans(flags: list[tuple[str, bool]]) -> tuple[tuple[str, str], ...]:
    spans: list[tuple[str, str]] = []
    run: list[str] = []
    for version, ok in [*flags, ("", False)]:
        if ok:
            run.append(version)
        elif run:
            spans.append((run[0], run[-1]))
            run = []
    return tuple(spans)


_LINUX = {
    "implementation_name": "cpython", "implementation_version": "3.12.0", "os_name": "posix",
    "platform_machine": "x86_64", "platform_python_implementation": "CPython", "platform_release": "",
    "platform_system": "Linux", "platform_version": "", "python_full_version": "3.12.0",
    "python_version": "3.12", "sys_platform": "linux", "extra": "",
}


def _driver(version: Version | None) -> str | None:
    """As NVIDIA writes it: two-digit fields after the branch (580.65.06), as compat.judge.torch_build does."""
    if version is None:
        return None
    first, *rest = version.release
    return ".".join([str(first), *(f"{p:02d}" for p in rest)])


def build_rows(m: Matrix) -> tuple[BuildRow, ...]:
    """Newest torch first, variants by CUDA."""
    rows = []
    for rel in reversed(m.torch.releases):
        for variant in sorted(rel.variants):
            cuda = variant.cuda
            if cuda is None:
                continue
            arch = m.torch.archs(rel.version, variant)
            floor = m.cuda.min_driver(cuda)
            rows.append(BuildRow(
                torch=rel.version,
                variant=variant.label,
                archs=tuple(sorted(arch.archs, key=cc_key)) if arch else (),
                ptx=bool(arch and arch.ptx),
                default=variant == rel.default_variant,
                min_driver=_driver(floor),
            ))
    return tuple(rows)


def wheel_rows(m: Matrix) -> tuple[WheelRow, ...]:
    minors = sorted({".".join(r.version.split(".")[:2]) for r in m.torch.releases}, key=Version)
    rows = []
    for ext in m.extensions.extensions:
        for rel in reversed(ext.releases):
            rows.append(WheelRow(
                package=ext.package,
                versions=tuple(str(v) for v in rel.versions),
                torch=str(rel.torch),
                torch_minors=tuple(t for t in minors if rel.torch.contains(Version(f"{t}.0"), prereleases=True)),
                python=str(rel.python),
                cuda_majors=rel.cuda_majors,
                min_compute_capability=ext.min_compute_capability,
                source=rel.source,
            ))
    return tuple(rows)


def load_log_lines(path: Path) -> dict[str, str]:
    """Signature id → a real log line it matches (matrix/log-lines.toml); empty when the file is absent."""
    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        doc = tomllib.load(fh)
    lines = doc.get("lines", {})
    return {k: v for k, v in lines.items() if isinstance(k, str) and isinstance(v, str) and re.fullmatch(r"[a-z0-9-]+", k)}
