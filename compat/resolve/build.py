"""From a resolution (resolvelib's mapping and criteria) to a `Lock`: pins with the reasons for each."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from packaging.specifiers import SpecifierSet

from compat.judge.torch_build import same_cuda_major_as_default
from compat.matrix import Matrix
from compat.matrix.builds import CudaBuild
from compat.matrix.extensions import Extension, ExtensionTable
from compat.model.asker import AskerKind
from compat.model.facts import Facts
from compat.model.lock import (
    LOCK_SCHEMA_VERSION,
    Constraint,
    Lock,
    LockNote,
    LockNoteKind,
    Pin,
    PinReason,
    PinReasonKind,
)
from compat.model.torch_variant import TorchVariant
from compat.resolve.hardware import TargetHardware
from compat.resolve.provider import BUILT_AGAINST_DEFAULT_TORCH, Candidate, Need, is_exact, is_pin
from compat.resolve.target import platform_name

# Built from the torch wheel index and published with the same local tag as torch; they must
# come from the same index as the torch build they ship next to.
TORCH_COMPANIONS = frozenset({"torchvision", "torchaudio"})

# Required by nearly everything, including packages the snapshot does not track (numba,
# mistral-common cap numpy): a pin here would fight them, so the lock gives the range and pip picks.
FLOATING = frozenset({"numpy"})


def build_lock(
    targets: Sequence[str],
    facts: Facts,
    matrix: Matrix,
    hw: TargetHardware,
    mapping: Mapping[str, Candidate],
    criteria: Mapping[str, Any],
    imposed: Sequence[Constraint],
    extensions: ExtensionTable,
    *,
    source_builds: frozenset[str] = frozenset(),
) -> Lock:
    pins: list[Pin] = []
    unpinned: list[str] = []
    notes: list[LockNote] = list(hw.notes)
    extras_of: dict[str, set[str]] = {}
    for cand in mapping.values():
        if cand.extras:
            extras_of.setdefault(cand.name, set()).update(cand.extras)
    torch = mapping.get("torch")
    torch_variant = torch.variant if torch is not None and not torch.default_variant else None
    for ident in sorted(mapping):
        cand = mapping[ident]
        if cand.extras:
            continue
        exact_target = any(info.parent is None and is_exact(info.requirement.specifier) for info in criteria[ident].information)
        if cand.version is None or (cand.name in FLOATING and not exact_target):
            spec = SpecifierSet()
            for info in criteria[ident].information:
                spec &= info.requirement.specifier
            unpinned.append(f"{cand.name}{spec}")
            continue
        if not cand.requires_known and extensions.find(cand.name) is None:
            notes.append(LockNote(kind=LockNoteKind.REQUIREMENTS_UNKNOWN, package=cand.name, version=str(cand.version)))
        local = torch_variant.label if torch_variant and (cand.name == "torch" or cand.name in TORCH_COMPANIONS) else None
        reasons = _asked(criteria, ident)
        build = _cuda_build(matrix, cand, torch, facts.python.version)
        if build is not None:
            local = build.local if build.tagged else None
            reasons += (PinReason(kind=PinReasonKind.CUDA_BUILD, variant=build.local, cuda=build.cuda, parent="torch",
                                  parent_version=f"{torch.version}+{torch.variant}" if torch is not None else None,
                                  default=False, source=build.source),)
        if cand.name == "torch" and cand.variant:
            cuda = cand.variant.cuda
            reasons += (PinReason(
                kind=PinReasonKind.TORCH_BUILD, variant=cand.variant.label, cuda=cuda,
                compute_capabilities=tuple(cc for cc, _ in hw.ccs), driver=hw.driver, default=cand.default_variant,
                parent=_kernels_asker(criteria[ident]) if hw.cpu and cuda else None,
            ),)
        reasons += tuple(PinReason(kind=PinReasonKind.KEPT_OFF, constraint=c) for c in imposed if c.package == cand.name)
        if cand.evidence is not None:
            reasons += (cand.evidence,)
        ext = extensions.find(cand.name)
        pins.append(
            Pin(
                name=cand.name,
                version=str(cand.version),
                local=local,
                extras=tuple(sorted(extras_of.get(cand.name, ()))),
                reasons=reasons,
                index_url=matrix.torch.index_url(TorchVariant.parse(local)) if local and (build is None or build.wheel is None) else None,
                after_torch=ext is not None,
                wheel=build.url(str(cand.version), facts.python.version) if build is not None else None,
            )
        )
        if ext is not None:
            notes.append(LockNote(kind=LockNoteKind.AFTER_TORCH, package=cand.name, version=str(cand.version)))
            missing = _no_wheel(ext, cand, torch, facts.python.version) if cand.name in source_builds else None
            if missing is not None:
                notes.append(LockNote(kind=LockNoteKind.FROM_SOURCE, package=cand.name, version=str(cand.version), reason=missing))
    return Lock(
        schema_version=LOCK_SCHEMA_VERSION,
        targets=tuple(targets),
        python_version=".".join(facts.python.version.split(".")[:2]),
        platform=platform_name(facts),
        hardware=hw.summary,
        pins=tuple(pins),
        unpinned=tuple(sorted(unpinned)),
        constraints=tuple(imposed),
        notes=tuple(dict.fromkeys(notes)),
    )


def _no_wheel(ext: Extension, cand: Candidate, torch: Candidate | None, python: str) -> str | None:
    """What the set needs that the pinned extension release has no prebuilt wheel for; None when one fits."""
    assert cand.version is not None
    row = ext.release(cand.version)
    if row is None:
        return f"no prebuilt wheel of {cand.name} {cand.version} is known (matrix/extensions.toml has no row for it)"
    wants = []
    if torch is not None and torch.version is not None and not row.torch.contains(torch.version, prereleases=True):
        wants.append(f"torch {torch.version} (its wheels cover torch {row.torch})")
    cuda = torch.variant.cuda if torch is not None and torch.variant else None
    if cuda is not None and int(cuda.split(".")[0]) not in row.cuda_majors:
        wants.append(f"CUDA {cuda.split('.')[0]} (its wheels: CUDA {', '.join(map(str, row.cuda_majors))})")
    if not row.python.contains(python, prereleases=True):
        wants.append(f"Python {python} (its wheels: {row.python})")
    if not wants:
        return None
    return f"{cand.name} {cand.version} has no prebuilt wheel for {' and '.join(wants)}; source: {row.source}"


def _cuda_build(matrix: Matrix, cand: Candidate, torch: Candidate | None, python: str) -> CudaBuild | None:
    """The build of `cand` to install beside torch's chosen build when the default index's wheel
    has kernels for another CUDA major (matrix/builds.toml); None when the default one fits."""
    if cand.version is None or torch is None or torch.version is None or cand.name not in BUILT_AGAINST_DEFAULT_TORCH:
        return None
    cuda = torch.variant.cuda if torch.variant else None
    if cuda is None or same_cuda_major_as_default(matrix, str(torch.version), torch.variant):
        return None
    return matrix.builds.build_for(cand.name, cand.version, python, cuda)


def _asked(criteria: Mapping[str, Any], ident: str) -> tuple[PinReason, ...]:
    """The targets and parents that asked for `ident` (and for it with extras)."""
    out: list[PinReason] = []
    names = [i for i in criteria if i == ident or i.startswith(ident + "[")]
    for name in names:
        for info in criteria[name].information:
            req: Need = info.requirement
            if info.parent is None and req.asker.kind is AskerKind.CATALOG:
                continue  # said by the KEPT_OFF reason
            if info.parent is None:
                out.append(PinReason(kind=PinReasonKind.TARGET, package=req.name, extras=tuple(sorted(req.extras)),
                                     specifier=str(req.specifier), variant=req.variant.label if req.variant else None))
            elif info.parent.name == req.name:
                continue  # an extra's link to its own base
            else:
                parent: Candidate = info.parent
                out.append(PinReason(
                    kind=PinReasonKind.PARENT, package=req.name, specifier=str(req.specifier), exact=is_pin(req.specifier),
                    parent=parent.name, parent_version=str(parent.version), parent_extras=tuple(sorted(parent.extras)),
                ))
    return tuple(sorted(dict.fromkeys(out), key=PinReason.sort_key))


def _kernels_asker(criterion: Any) -> str | None:
    """The packages whose kernels made a CPU target take torch's public CUDA build ("flashinfer-python, vllm")."""
    names = sorted({info.requirement.asker.package for info in criterion.information
                    if info.requirement.default_build and info.requirement.asker.package})
    return ", ".join(names) or None
