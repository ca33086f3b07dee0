"""The one rule for which torch build fits a GPU set and a driver; doctor, lock and plan all ask it.

A release's public-index (default) build comes first, since that is what `pip install torch==X`
installs and what vLLM, xformers and flashinfer wheels are compiled against; the other CUDA
builds on the PyTorch index follow, newest CUDA first. A build fits when it has kernels for
every GPU and the driver runs its CUDA fully (or, when the policy allows it, only through
NVIDIA's minor-version compatibility).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.version import Version

from compat.matrix import Matrix
from compat.matrix.torch import TorchRelease
from compat.model.facts import Gpu
from compat.model.rejection import Rejection, RejectionKind
from compat.model.torch_variant import TorchVariant


@dataclass(frozen=True, kw_only=True)
class TorchBuildPolicy:
    """What a caller accepts beyond the plain rule."""

    minor_compat: bool = False
    """Accept a build the driver runs only under CUDA minor-version compatibility (no PTX JIT)."""
    same_cuda_major_as_default: bool = False
    """Only builds with the CUDA major of the public-index build: another package's kernels were built for it."""
    other_cuda_majors: frozenset[str] = frozenset()
    """CUDA majors allowed besides that one: that package has builds for them too (matrix/builds.toml)."""
    cpu: bool = False
    """The target has no NVIDIA GPU (`--gpus cpu`, macOS): the CPU build, never a CUDA one."""
    public_cpu: bool = False
    """The platform's public-index wheel is the CPU build (macOS, Windows): no local tag, no extra index."""
    variant: TorchVariant | None = None
    """Only this build (cu126, cpu): the caller pinned it (`torch==2.6.0+cu126`)."""


@dataclass(frozen=True, kw_only=True)
class TorchBuildChoice:
    """The build of a torch release to install."""

    version: str
    """The release ("2.6.0")."""
    variant: TorchVariant | None
    """Its build (cu124); None when nothing about the hardware is known and any build will do."""
    cuda: str | None
    """The CUDA of that build ("12.4"); None for a CPU build or an unknown variant."""
    default: bool
    """The public index serves this build: `pip install torch==X` gets it."""
    index_url: str | None
    """The PyTorch wheel index to install it from; None when the public index has it."""
    min_driver: str | None
    """The lowest driver that runs this build under the policy; None without CUDA or when not curated."""

    @property
    def local(self) -> str | None:
        """The local version tag a pin needs ("cu126"), only for a build the public index does not serve."""
        return None if self.default or self.variant is None else self.variant.label


def pin_text(choice: TorchBuildChoice) -> str:
    """The requirement that installs exactly this build ("torch==2.6.0+cu126"), as lock pins it."""
    return f"torch=={choice.version}+{choice.local}" if choice.local else f"torch=={choice.version}"


def install_command(choice: TorchBuildChoice) -> str:
    """The pip command that installs this build, from the index that serves it."""
    index = f" --index-url {choice.index_url}" if choice.index_url else ""
    return f"pip install '{pin_text(choice)}'{index}"


Gpus = Sequence[tuple[str, str]]
"""(compute capability, GPU name) of each distinct architecture, lowest first."""


def gpu_archs(gpus: Iterable[Gpu]) -> tuple[tuple[str, str], ...]:
    """What the chooser is asked about: each known architecture once (first GPU's name), lowest first."""
    ccs: dict[str, str] = {}
    for gpu in gpus:
        if isinstance(gpu.compute_capability, str):
            ccs.setdefault(gpu.compute_capability, gpu.name)
    return tuple(sorted(ccs.items(), key=lambda kv: Version(kv[0])))


def same_cuda_major_as_default(
    matrix: Matrix, version: str, variant: TorchVariant | None, others: frozenset[str] = frozenset(),
) -> bool:
    """Whether torch `version`'s `variant` build has the CUDA major of its public-index build, or one of `others`."""
    if variant is None:
        return True
    if _major(variant) in others:
        return True
    release = matrix.torch.release(version)
    return _same_major(variant, release.default_variant) if release else variant.cuda is None


def driver_text(version: Version) -> str:
    """NVIDIA writes driver versions with two-digit fields after the branch (560.28.03)."""
    first, *rest = version.release
    return ".".join([str(first), *(f"{p:02d}" for p in rest)])


def min_driver(matrix: Matrix, cuda: str, policy: TorchBuildPolicy) -> str | None:
    """The lowest driver that runs a CUDA `cuda` runtime under `policy`; None when not curated."""
    floor = matrix.cuda.min_driver(cuda)
    if policy.minor_compat:
        family = matrix.cuda.family(int(cuda.split(".")[0]))
        if family is not None and (floor is None or family.min_driver < floor):
            floor = family.min_driver
    return driver_text(floor) if floor is not None else None


def choose_torch_build(
    matrix: Matrix,
    version: str,
    *,
    gpus: Gpus,
    driver: str | None,
    python: str | None = None,
    policy: TorchBuildPolicy = TorchBuildPolicy(),
) -> TorchBuildChoice | Rejection:
    """The build of torch `version` to install for `gpus` on `driver`, or why none fits.

    `driver` None means no NVIDIA driver is known; with no GPUs and no driver any build does,
    and the default one is chosen. `python` None skips the interpreter check (an installed torch).
    """
    base = version.split("+")[0]
    release = matrix.torch.release(base)
    if release is None:
        if not gpus and driver is None:
            return TorchBuildChoice(version=base, variant=None, cuda=None, default=True, index_url=None, min_driver=None)
        return Rejection(kind=RejectionKind.TORCH_NOT_CURATED, package="torch", version=base)
    if python is not None and not release.python.contains(python, prereleases=True):
        return Rejection(
            kind=RejectionKind.NO_PYTHON_WHEELS, package="torch", version=base, python=python,
            supported=str(release.python),
        )
    if policy.variant is not None and policy.variant not in release.variants:
        return Rejection(kind=RejectionKind.NO_SUCH_BUILD, package="torch", version=base, variant=policy.variant.label)
    if (policy.variant is not None and policy.variant.is_cpu) or (policy.cpu and not policy.same_cuda_major_as_default):
        return _cpu_choice(matrix, release, policy)
    if policy.cpu and policy.variant is None:
        # Another package's kernels link the CUDA runtime of torch's public build (vLLM, xformers):
        # under the CPU build its extension cannot load, while the public build imports (and runs
        # on the CPU) without a GPU. So that build, as `pip install` would choose.
        return _choice(matrix, release, release.default_variant, policy)
    if not gpus and driver is None:
        return _choice(matrix, release, policy.variant or release.default_variant, policy)
    problems: list[Rejection] = []
    fallback: TorchVariant | None = None
    for variant in _in_order(release) if policy.variant is None else [policy.variant]:
        cuda = variant.cuda
        if cuda is None:
            continue  # CPU and ROCm builds do not use an NVIDIA GPU
        missing = [(cc, name) for cc, name in gpus if matrix.torch.runs_on(base, variant, cc) is not True]
        if missing:
            cc, name = missing[0]
            problems.append(Rejection(
                kind=RejectionKind.NO_ARCH, package="torch", version=base, variant=variant.label,
                compute_capability=cc, gpu=name,
            ))
            continue
        if driver is not None:
            support = matrix.cuda.driver_runs(driver, cuda)
            if support == "no" or (support == "minor-compat" and not policy.minor_compat):
                if support == "minor-compat" and fallback is None:
                    fallback = variant
                problems.append(Rejection(
                    kind=RejectionKind.NEEDS_DRIVER, package="torch", version=base, variant=variant.label,
                    driver=driver, max_cuda=matrix.cuda.max_cuda(driver), min_driver=min_driver(matrix, cuda, policy),
                ))
                continue
        if (policy.same_cuda_major_as_default and not _same_major(variant, release.default_variant)
                and _major(variant) not in policy.other_cuda_majors):
            problems.append(Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version=base, variant=variant.label))
            continue
        return _choice(matrix, release, variant, policy)
    return _rejection(base, problems, driver=driver, max_cuda=matrix.cuda.max_cuda(driver) if driver else None,
                      fallback=fallback.label if fallback else None)


_CPU = TorchVariant.parse("cpu")


def _cpu_choice(matrix: Matrix, release: TorchRelease, policy: TorchBuildPolicy) -> TorchBuildChoice | Rejection:
    if policy.public_cpu:
        return TorchBuildChoice(version=release.version, variant=_CPU, cuda=None, default=True, index_url=None, min_driver=None)
    if _CPU not in release.variants:
        return Rejection(kind=RejectionKind.NO_SUCH_BUILD, package="torch", version=release.version, variant=_CPU.label)
    return _choice(matrix, release, _CPU, policy)


def _in_order(release: TorchRelease) -> list[TorchVariant]:
    """The public-index build first, then the other CUDA builds, newest CUDA first."""
    others = sorted((v for v in release.variants if v != release.default_variant and v.cuda), reverse=True)
    return [release.default_variant, *others]


def _major(variant: TorchVariant) -> str | None:
    """The CUDA major as the policies name it ("12"); None for a build without CUDA."""
    return str(variant.cuda_major) if variant.cuda_major is not None else None


def _same_major(variant: TorchVariant, default: TorchVariant) -> bool:
    return variant.cuda_major == default.cuda_major


def _choice(matrix: Matrix, release: TorchRelease, variant: TorchVariant, policy: TorchBuildPolicy) -> TorchBuildChoice:
    cuda = variant.cuda
    default = variant == release.default_variant
    return TorchBuildChoice(
        version=release.version,
        variant=variant,
        cuda=cuda,
        default=default,
        index_url=None if default else matrix.torch.index_url(variant),
        min_driver=min_driver(matrix, cuda, policy) if cuda else None,
    )


def _rejection(
    version: str, problems: list[Rejection], *, driver: str | None, max_cuda: str | None, fallback: str | None,
) -> Rejection:
    if not problems:
        return Rejection(kind=RejectionKind.NO_CUDA_BUILD, package="torch", version=version)
    kinds = {p.kind for p in problems}
    if kinds == {RejectionKind.NO_ARCH}:
        return Rejection(
            kind=RejectionKind.NO_ARCH, package="torch", version=version,
            compute_capability=problems[0].compute_capability, gpu=problems[0].gpu, problems=tuple(problems),
        )
    if kinds == {RejectionKind.NEEDS_DRIVER}:
        floors = [Version(p.min_driver) for p in problems if p.min_driver]
        return Rejection(
            kind=RejectionKind.NEEDS_DRIVER, package="torch", version=version, driver=driver, max_cuda=max_cuda,
            min_driver=driver_text(min(floors)) if floors else None, fallback_variant=fallback,
            problems=tuple(problems),
        )
    if kinds == {RejectionKind.OTHER_CUDA_MAJOR}:
        return Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version=version, problems=tuple(problems))
    return Rejection(kind=RejectionKind.NO_BUILD_FITS, package="torch", version=version, problems=tuple(problems))
