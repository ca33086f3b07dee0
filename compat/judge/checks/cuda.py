"""torch's CUDA build against the driver and the GPUs: import, driver age, CPU builds, architectures.

Which build should be installed instead is never decided here: `choose_torch_build` decides it,
the same rule `compat lock` and `compat plan` follow, so the three name the same build and the
same minimum driver.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from compat.judge.checks._util import (
    about,
    cannot_check,
    declared_note,
    distinct_gpus,
    found,
    gpu_label,
)
from compat.judge.torch_build import (
    TorchBuildChoice,
    TorchBuildPolicy,
    choose_torch_build,
    gpu_archs,
    install_command,
    min_driver,
    pin_text,
)
from compat.matrix import Matrix
from compat.matrix.torch import arch_list_runs_on, cuda_variant, sm
from compat.model.facts import Facts, TorchBuild, TorchSource
from compat.model.findings import Evidence, Finding, curated, observed
from compat.model.rejection import Rejection, RejectionKind
from compat.model.unknown import Unknown

IMPORT_FAILS = "torch-import-fails"
DRIVER_TOO_OLD = "cuda-driver-too-old"
MINOR_COMPAT = "torch-cuda-minor-compat"
CPU_ONLY = "torch-cpu-only-build"
NO_ARCH = "gpu-arch-not-in-torch-build"

OWNS: dict[str, frozenset[str]] = {fid: frozenset() for fid in (IMPORT_FAILS, DRIVER_TOO_OLD, MINOR_COMPAT, CPU_ONLY, NO_ARCH)}
"""The catalog entries these checks decide, and the `{fields}` each fills: none, since explain shows
these entries too (each has log patterns) and their words must read right without this environment's
facts, which go into the evidence and the commands instead."""

POLICY = TorchBuildPolicy()
"""What doctor recommends is what `compat lock` pins without --minor-compat."""


def _torch(facts: Facts) -> TorchBuild | None:
    return facts.torch if isinstance(facts.torch, TorchBuild) else None


def _base(torch: TorchBuild) -> str:
    return torch.version.split("+")[0]


def _local(version: str) -> str | None:
    try:
        return Version(version).local
    except ValueError:
        return None


def _choose(facts: Facts, matrix: Matrix, version: str) -> TorchBuildChoice | Rejection:
    gpus = facts.hardware.gpus
    driver = facts.hardware.driver
    return choose_torch_build(
        matrix, version, gpus=gpu_archs(() if isinstance(gpus, Unknown) else gpus),
        driver=driver if isinstance(driver, str) else None, policy=POLICY,
    )


def _commands(torch: TorchBuild, choice: TorchBuildChoice) -> tuple[str, ...]:
    """Commands that replace the installed build with `choice`.

    `pip install torch==X` counts any installed X+local as satisfying it, so a build with a
    local tag must go first when the public index's build (no tag) replaces it.
    """
    install = install_command(choice)
    if choice.local is None and _local(torch.version) is not None:
        return ("pip uninstall -y torch", install)
    return (install,)


def _no_build(rejection: Rejection) -> Evidence:
    """The evidence for a release none of whose builds fits this machine (from matrix/torch.toml)."""
    return curated(_no_build_text(rejection), source="matrix/torch.toml")


def _no_build_text(rejection: Rejection) -> str:
    v = rejection.version
    if rejection.kind is RejectionKind.NEEDS_DRIVER:
        floor = f"the oldest driver one runs on is {rejection.min_driver}" if rejection.min_driver else "none is curated"
        line = f"no build of torch {v} runs on driver {rejection.driver}: {floor}"
        if rejection.fallback_variant:
            line += f" ({rejection.fallback_variant} runs only through CUDA minor-version compatibility)"
        return line
    if rejection.kind is RejectionKind.NO_ARCH and rejection.compute_capability:
        return f"no build of torch {v} has kernels for {sm(rejection.compute_capability)} ({rejection.gpu})"
    if rejection.kind is RejectionKind.TORCH_NOT_CURATED:
        return f"the builds of torch {v} are not curated"
    if rejection.kind is RejectionKind.NO_CUDA_BUILD:
        return f"torch {v} has no CUDA build"
    return f"no build of torch {v} has kernels for these GPUs and runs on this driver"


def _fits(text: str, choice: TorchBuildChoice) -> Evidence:
    """The evidence for the build that fits this machine: what the build table says, with its pin."""
    return curated(f"{text}: {pin_text(choice)}", source="matrix/torch.toml")


def _first_release_with_a_build(facts: Facts, matrix: Matrix, after: str) -> str | None:
    """The oldest curated release newer than `after` that has a build for this machine."""
    for release in matrix.torch.releases:
        if Version(release.version) > Version(after) and isinstance(_choose(facts, matrix, release.version), TorchBuildChoice):
            return release.version
    return None


def check_torch_import(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    if torch is None or torch.import_error is None:
        return
    if isinstance(torch.import_error, Unknown):
        yield cannot_check(matrix, IMPORT_FAILS, torch.import_error)
        return
    yield found(matrix, IMPORT_FAILS, evidence=(observed(f"torch {torch.version}: {torch.import_error}"),))


def check_driver(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    if torch is None or torch.cuda is None:
        return
    if isinstance(torch.cuda, Unknown):
        yield cannot_check(matrix, DRIVER_TOO_OLD, torch.cuda)
        return
    driver = facts.hardware.driver
    if driver is None:
        return  # no NVIDIA driver at all: the CPU-build check and the GPU checks speak for this
    if isinstance(driver, Unknown):
        yield cannot_check(matrix, DRIVER_TOO_OLD, f"driver version: {driver.reason}")
        return
    try:
        support = matrix.cuda.driver_runs(driver, torch.cuda)
        top = matrix.cuda.max_cuda(driver) or "none"
        choice = _choose(facts, matrix, _base(torch))
    except ValueError as exc:
        yield cannot_check(matrix, DRIVER_TOO_OLD, f"driver version {driver!r}: {exc}")
        return
    if support == "full":
        return
    need = min_driver(matrix, torch.cuda, POLICY)
    driver_line = observed(f"driver {driver}{declared_note(facts, 'driver')} supports CUDA <= {top}",
                           declared="driver" in facts.declared)
    evidence: tuple[Evidence, ...]
    if isinstance(choice, TorchBuildChoice):
        built = observed(f"torch {torch.version} is built for CUDA {torch.cuda}, which needs driver >= {need}")
        evidence = (built, driver_line, _fits(f"the {choice.variant} build of torch {choice.version} runs on it", choice))
        commands = _commands(torch, choice)
    else:
        evidence = (observed(f"torch {torch.version} is built for CUDA {torch.cuda}"), driver_line, _no_build(choice))
        commands = ()
    if support == "no":
        yield found(matrix, DRIVER_TOO_OLD, evidence=evidence, commands=commands)
    else:
        yield found(matrix, MINOR_COMPAT, evidence=evidence, commands=commands)


def check_cpu_build(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    gpus = facts.hardware.gpus
    if torch is None or torch.cuda is not None or isinstance(gpus, Unknown) or not gpus:
        return
    try:
        choice = _choose(facts, matrix, _base(torch))
    except ValueError as exc:
        yield cannot_check(matrix, CPU_ONLY, f"driver version: {exc}")
        return
    evidence = (observed(f"torch {torch.version} has no CUDA"),
                observed(f"{len(gpus)} GPU(s){declared_note(facts, 'gpus')}: {gpu_label(gpus[0])}", declared="gpus" in facts.declared))
    if isinstance(choice, TorchBuildChoice):
        yield found(
            matrix, CPU_ONLY, evidence=evidence + (_fits(f"the {choice.variant} build fits", choice),),
            requires=(f"torch=={choice.version}",), commands=_commands(torch, choice),
        )
    else:
        yield found(matrix, CPU_ONLY, evidence=evidence + (_no_build(choice),))


def check_arch(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    gpus = facts.hardware.gpus
    if torch is None or torch.cuda is None or isinstance(gpus, Unknown) or not gpus:
        return
    if isinstance(torch.cuda, Unknown):
        yield cannot_check(matrix, NO_ARCH, torch.cuda)
        return
    variant = cuda_variant(torch.cuda)
    base = _base(torch)
    for gpu in distinct_gpus(gpus):
        cc = gpu.compute_capability
        if isinstance(cc, Unknown):
            yield cannot_check(matrix, NO_ARCH, f"compute capability of {gpu.name}: {cc.reason}")
            continue
        if torch.source in (TorchSource.IMPORT, TorchSource.FILES) and not isinstance(torch.arch_list, Unknown) and torch.arch_list:
            covered: bool | None = arch_list_runs_on(torch.arch_list, cc)
            archs = observed(f"torch {torch.version} ({variant}) archs: {' '.join(torch.arch_list)}")
        else:
            covered = matrix.torch.runs_on(base, variant, cc)
            row = matrix.torch.archs(base, variant)
            listed = " ".join(sm(a) for a in row.archs) if row else "not curated"
            archs = curated(f"torch {torch.version} ({variant}) archs: {listed}", source="matrix/torch.toml")
        if covered is None:
            yield cannot_check(matrix, NO_ARCH, f"the architectures of torch {base} {variant} are not curated")
            continue
        if covered:
            continue
        evidence = (about(facts, "gpus", gpu_label(gpu)), archs)
        try:
            choice = _choose(facts, matrix, base)
        except ValueError:
            yield found(matrix, NO_ARCH, evidence=evidence)
            continue
        if isinstance(choice, TorchBuildChoice):
            yield found(
                matrix, NO_ARCH, evidence=evidence + (_fits(f"the {choice.variant} build has it", choice),),
                requires=(f"torch=={choice.version}",), commands=_commands(torch, choice),
            )
            continue
        newer = _first_release_with_a_build(facts, matrix, base)
        if newer is None:
            yield found(matrix, NO_ARCH, evidence=evidence + (_no_build(choice), curated("no curated torch release has a build for it")))
        else:
            yield found(
                matrix, NO_ARCH, evidence=evidence + (_no_build(choice), curated(f"torch {newer} is the first release with one")),
                requires=(f"torch>={newer}",),
            )
