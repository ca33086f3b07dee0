"""torch's CUDA build against the driver and the GPUs: import, driver age, CPU builds, architectures."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import legacy_cannot_check, declared_note, distinct_gpus, gpu_label
from compat.model.facts import Facts, TorchBuild, TorchSource
from compat.model.findings import Finding, Fix, Severity, Status
from compat.matrix import Matrix
from compat.matrix.cuda import cuda_key
from compat.matrix.torch import arch_list_runs_on, cuda_variant, variant_cuda
from compat.model.unknown import Unknown


def _torch(facts: Facts) -> TorchBuild | None:
    return facts.torch if isinstance(facts.torch, TorchBuild) else None


def check_torch_import(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    if torch is None or torch.import_error is None:
        return
    yield Finding(
        id="torch-import-fails",
        severity=Severity.ERROR,
        status=Status.FOUND,
        title=f"torch {torch.version} fails to import",
        cause="Importing torch failed in a separate interpreter; every training run will fail the same way. "
        "The other torch facts below come from its package metadata.",
        fix=Fix(advice="Run `compat explain` on the error below, or reinstall torch from the index that matches this driver."),
        evidence=(torch.import_error,),
    )


def _support(matrix: Matrix, driver: str, cuda: str) -> str:
    try:
        return matrix.cuda.driver_runs(driver, cuda)
    except ValueError:
        return "unknown"


def best_variant(matrix: Matrix, version: str, driver: str | None, cc: str | None) -> str | None:
    """The newest CUDA variant of torch `version` that `driver` runs fully and that has kernels for `cc`."""
    release = matrix.torch.release(version)
    if release is None:
        return None
    candidates = [v for v in release.variants if v.startswith("cu")]
    candidates.sort(key=lambda v: cuda_key(variant_cuda(v)), reverse=True)
    for variant in candidates:
        if driver is not None and _support(matrix, driver, variant_cuda(variant)) != "full":
            continue
        if cc is not None and matrix.torch.runs_on(version, variant, cc) is False:
            continue
        return variant
    return None


def _install_hint(matrix: Matrix, version: str, variant: str) -> str:
    release = matrix.torch.release(version)
    base = version.split("+")[0]
    if release is not None and release.default_variant == variant:
        return f"pip install 'torch=={base}'"
    return f"pip install 'torch=={base}' --index-url {matrix.torch.index_url(variant)}"


def check_driver(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    fid, title = "torch-cuda-newer-than-driver", "The NVIDIA driver runs torch's CUDA build"
    torch = _torch(facts)
    if torch is None or torch.cuda is None:
        return
    if isinstance(torch.cuda, Unknown):
        yield legacy_cannot_check(fid, Severity.ERROR, title, torch.cuda)
        return
    driver = facts.hardware.driver
    if driver is None:
        return  # no NVIDIA driver at all: the CPU-build check and the GPU checks speak for this
    if isinstance(driver, Unknown):
        yield legacy_cannot_check(fid, Severity.ERROR, title, f"driver version: {driver.reason}")
        return
    support = _support(matrix, driver, torch.cuda)
    if support in ("full", "unknown"):
        return
    top = matrix.cuda.max_cuda(driver) or "none"
    need = matrix.cuda.min_driver(torch.cuda)
    family = matrix.cuda.family(int(torch.cuda.split(".")[0]))
    gpus = facts.hardware.gpus
    cc = None if isinstance(gpus, Unknown) or not gpus else gpus[0].compute_capability
    variant = best_variant(matrix, torch.version.split("+")[0], driver, cc if isinstance(cc, str) else None)
    alt = f"or install a build this driver runs: {_install_hint(matrix, torch.version, variant)}" if variant else (
        "no build of this torch release runs on this driver: use an older torch release"
    )
    evidence = (
        f"torch {torch.version} is built for CUDA {torch.cuda}",
        f"driver {driver}{declared_note(facts, 'driver')} supports CUDA <= {top}",
    )
    if support == "no":
        floor = family.min_driver if family else need
        yield Finding(
            id=fid,
            severity=Severity.ERROR,
            status=Status.FOUND,
            title=f"torch {torch.version} needs a newer NVIDIA driver than {driver}",
            cause=f"The CUDA {torch.cuda} runtime in this torch wheel needs driver >= {floor}; on this driver torch "
            "reports `The NVIDIA driver on your system is too old` and CUDA is unavailable.",
            fix=Fix(advice=f"Upgrade the driver to >= {need or floor}, {alt}."),
            evidence=evidence,
            refs=("https://docs.nvidia.com/deploy/cuda-compatibility/", "pytorch/pytorch#162531"),
        )
    else:
        yield Finding(
            id="torch-cuda-minor-compat",
            severity=Severity.WARNING,
            status=Status.FOUND,
            title=f"torch {torch.version} runs on driver {driver} only through CUDA minor-version compatibility",
            cause=f"CUDA {torch.cuda} is newer than the driver's CUDA {top}. Plain kernels work, but PTX newer than "
            "the driver cannot be JIT-compiled: Triton, torch.compile and JIT kernels (vLLM, flashinfer) can fail "
            "with `the provided PTX was compiled with an unsupported toolchain`.",
            fix=Fix(advice=f"Upgrade the driver to >= {need}, {alt}."),
            evidence=evidence,
            refs=("https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",),
        )


def check_cpu_build(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = _torch(facts)
    gpus = facts.hardware.gpus
    if torch is None or torch.cuda is not None or isinstance(gpus, Unknown) or not gpus:
        return
    driver = facts.hardware.driver if isinstance(facts.hardware.driver, str) else None
    cc = gpus[0].compute_capability if isinstance(gpus[0].compute_capability, str) else None
    variant = best_variant(matrix, torch.version.split("+")[0], driver, cc)
    hint = _install_hint(matrix, torch.version, variant) if variant else "install a CUDA build of torch"
    yield Finding(
        id="torch-cpu-build-on-gpu-machine",
        severity=Severity.ERROR,
        status=Status.FOUND,
        title=f"torch {torch.version} is a CPU-only build on a machine with {len(gpus)} GPU(s)",
        cause="A CPU wheel of torch cannot use the GPUs (`Torch not compiled with CUDA enabled`). It usually "
        "arrives when another package's install resolves torch from an index that only has CPU wheels.",
        fix=Fix(advice=f"Reinstall torch with CUDA: {hint} (keep the version other packages pin)."),
        evidence=(f"torch {torch.version} has no CUDA", f"{len(gpus)} GPU(s){declared_note(facts, 'gpus')}: {gpu_label(gpus[0])}"),
        refs=("vllm-project/vllm#9701",),
    )


def check_arch(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    fid, title = "gpu-arch-not-in-torch-build", "torch has kernels for every GPU"
    torch = _torch(facts)
    gpus = facts.hardware.gpus
    if torch is None or torch.cuda is None or isinstance(gpus, Unknown) or not gpus:
        return
    if isinstance(torch.cuda, Unknown):
        yield legacy_cannot_check(fid, Severity.ERROR, title, torch.cuda)
        return
    variant = cuda_variant(torch.cuda)
    base = torch.version.split("+")[0]
    for gpu in distinct_gpus(gpus):
        cc = gpu.compute_capability
        if isinstance(cc, Unknown):
            yield legacy_cannot_check(fid, Severity.ERROR, title, f"compute capability of {gpu.name}: {cc.reason}")
            continue
        if torch.source is TorchSource.IMPORT and not isinstance(torch.arch_list, Unknown) and torch.arch_list:
            covered: bool | None = arch_list_runs_on(torch.arch_list, cc)
            archs = " ".join(torch.arch_list)
        else:
            covered = matrix.torch.runs_on(base, variant, cc)
            row = matrix.torch.archs(base, variant)
            archs = " ".join(f"sm_{a.replace('.', '')}" for a in row.archs) if row else "not curated"
        if covered is None:
            yield legacy_cannot_check(fid, Severity.ERROR, title, f"the architectures of torch {base} {variant} are not curated")
            continue
        if covered:
            continue
        driver = facts.hardware.driver if isinstance(facts.hardware.driver, str) else None
        fix_variant = best_variant(matrix, base, driver, cc)
        if fix_variant:
            advice = f"Install a build of the same release that has sm_{cc.replace('.', '')}: {_install_hint(matrix, base, fix_variant)}."
        else:
            newer = _first_release_covering(matrix, cc, driver)
            advice = (
                f"No build of torch {base} has kernels for sm_{cc.replace('.', '')}; use torch>={newer} "
                "(and versions of vLLM/flash-attn that match it), or `compat lock` for this GPU."
                if newer else "No curated torch build supports this GPU."
            )
        yield Finding(
            id=fid,
            severity=Severity.ERROR,
            status=Status.FOUND,
            title=f"torch {torch.version} has no kernels for {gpu_label(gpu)}",
            cause=f"The build contains {archs}. Without a cubin for this compute capability or PTX it can JIT, "
            "kernels fail with `no kernel image is available for execution on the device`.",
            fix=Fix(advice=advice),
            evidence=(f"{gpu_label(gpu)}{declared_note(facts, 'gpus')}", f"torch {torch.version} ({variant}) archs: {archs}"),
            refs=("pytorch/pytorch#150733", "pytorch/pytorch#158301"),
        )


def _first_release_covering(matrix: Matrix, cc: str, driver: str | None) -> str | None:
    for release in matrix.torch.releases:
        if best_variant(matrix, release.version, driver, cc):
            return release.version
    return None
