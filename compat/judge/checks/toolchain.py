"""The CUDA around torch: the nvcc that JIT builds use, the libraries LD_LIBRARY_PATH puts first,
and the CUDA a container image declares against the driver that has to start it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from compat.judge.checks._util import cannot_check, declared_note, found
from compat.matrix import Matrix
from compat.model.facts import Facts, System, TorchBuild
from compat.model.findings import Finding, curated, observed
from compat.model.unknown import Unknown

NVCC = "ds-cuda-version-mismatch-opbuild"
RUNTIME = "cuda-driver-insufficient-runtime"
GCC = "nvcc-gcc-too-new"
CONTAINER = "container-cuda-newer-than-driver"
LD_PATH = "system-cuda-on-ld-library-path"

OWNS = {
    NVCC: frozenset[str](),
    RUNTIME: frozenset[str](),
    GCC: frozenset[str](),
    CONTAINER: frozenset[str](),
    LD_PATH: frozenset({"entries"}),
}
"""The catalog entries these checks speak through, and the `{fields}` they fill (none where explain
shows the entry too: its words must read right without this environment's facts)."""

# A CUDA toolkit's or NCCL's library directory: /usr/local/cuda-12.1/lib64, /opt/nccl/lib,
# /usr/local/cuda/targets/x86_64-linux/lib. The wheels' own (site-packages/nvidia/...) are not.
_SYSTEM_CUDA_DIR = re.compile(r"(^|/)(cuda[\w.-]*|nccl[\w.-]*)(/|$)", re.IGNORECASE)
_NVIDIA_WHEEL = re.compile(r"^nvidia-[a-z-]+-cu\d+$")


def _major_minor(text: str) -> tuple[int, int] | None:
    try:
        release = Version(text).release
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return None
    return (release[0], release[1] if len(release) > 1 else 0)


def check_nvcc(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """DeepSpeed JIT-builds its ops with the nvcc it finds and refuses one of another major than torch's."""
    ds = facts.package("deepspeed")
    torch = facts.torch
    if ds is None or isinstance(ds, Unknown) or not isinstance(torch, TorchBuild) or not isinstance(torch.cuda, str):
        return
    if isinstance(facts.system, Unknown):
        return  # a snapshot without the toolchain: nothing to judge, and nothing points at a problem
    nvcc = _tool(facts.system, "nvcc")
    if nvcc is None:
        return  # no toolkit: DeepSpeed can only use prebuilt ops, which it says when it needs one
    if isinstance(nvcc, Unknown):
        yield cannot_check(matrix, NVCC, f"nvcc: {nvcc.reason}")
        return
    have, want = _major_minor(nvcc), _major_minor(torch.cuda)
    if have is None or want is None or have[0] == want[0]:
        return  # DeepSpeed accepts a minor-version difference
    yield found(matrix, NVCC, evidence=(
        observed(f"deepspeed {ds.version} installed"), observed(f"nvcc {nvcc} on PATH"),
        observed(f"torch {torch.version} built with CUDA {torch.cuda}"),
    ))


def check_host_compiler(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """nvcc refuses a gcc newer than its toolkit supports; DeepSpeed and flash-attn build with it."""
    builders = [d for d in (facts.package("deepspeed"), facts.package("flash-attn")) if d is not None and not isinstance(d, Unknown)]
    if not builders or isinstance(facts.system, Unknown):
        return
    nvcc, gcc = _tool(facts.system, "nvcc"), _tool(facts.system, "gcc")
    if not isinstance(nvcc, str) or not isinstance(gcc, str):
        return  # no toolkit or no compiler: nothing gets built here
    try:
        toolkit = matrix.cuda.toolkit(nvcc)
    except ValueError:
        return
    have = _major_minor(gcc)
    if toolkit is None or toolkit.max_gcc is None or have is None or have[0] <= toolkit.max_gcc:
        return
    yield found(matrix, GCC, evidence=(
        curated(f"nvcc {nvcc} (CUDA {toolkit.version}) accepts gcc <= {toolkit.max_gcc}", source="matrix/cuda.toml"),
        observed(f"gcc {gcc} on PATH"),
        observed(", ".join(f"{d.name} {d.version}" for d in builders) + " build with nvcc"),
    ))


def _tool(system: System, name: str) -> str | None | Unknown:
    return next((t.version for t in system.tools if t.name == name), None)


def check_toolkit_runtime(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """A system CUDA toolkit of a newer major than the driver runs, where something will load it.

    Within a major, minor-version compatibility lets a newer runtime start on an older driver;
    across majors the runtime refuses (cudaErrorInsufficientDriver). Its libraries are loaded when
    LD_LIBRARY_PATH names them or when an extension is JIT-built with its nvcc (DeepSpeed ops).
    """
    if isinstance(facts.system, Unknown) or not isinstance(facts.system.cuda_toolkit, str):
        return
    driver, top = facts.hardware.driver, facts.hardware.driver_cuda
    if not isinstance(driver, str) or not isinstance(top, str):
        return
    toolkit, supported = _major_minor(facts.system.cuda_toolkit), _major_minor(top)
    if toolkit is None or supported is None or toolkit[0] <= supported[0]:
        return
    path = facts.launch.env.get("LD_LIBRARY_PATH", "")
    on_path = [e for e in path.split(":") if e and _SYSTEM_CUDA_DIR.search(e) and "site-packages" not in e]
    builders = [d for d in (facts.package("deepspeed"), facts.package("flash-attn")) if d is not None and not isinstance(d, Unknown)]
    if not on_path and not builders:
        return
    users = [observed(f"LD_LIBRARY_PATH names {', '.join(on_path)}")] if on_path else []
    users += [observed(f"{d.name} {d.version} builds its CUDA code with that toolkit") for d in builders]
    yield found(matrix, RUNTIME, evidence=(
        observed(f"CUDA toolkit {facts.system.cuda_toolkit} installed (version.json)"),
        observed(f"driver {driver}{declared_note(facts, 'driver')} supports CUDA <= {top}", declared="driver" in facts.declared),
        *users,
    ))


def check_ld_library_path(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """A system CUDA or NCCL directory on LD_LIBRARY_PATH beside a torch whose CUDA came as wheels."""
    torch = facts.torch
    if not isinstance(torch, TorchBuild) or not isinstance(torch.cuda, str) or isinstance(facts.packages, Unknown):
        return
    wheels = sorted(d.name for d in facts.packages if _NVIDIA_WHEEL.match(d.name))
    if not wheels:
        return  # a conda or system torch uses the system libraries on purpose
    path = facts.launch.env.get("LD_LIBRARY_PATH", "")
    entries = [e for e in path.split(":") if e and _SYSTEM_CUDA_DIR.search(e) and "site-packages" not in e]
    if not entries:
        return
    shown = ", ".join(dict.fromkeys(entries))
    yield found(
        matrix, LD_PATH, values={"entries": shown},
        evidence=(observed(f"LD_LIBRARY_PATH={path}"),
                  observed(f"torch {torch.version} uses the CUDA libraries of {len(wheels)} nvidia-* wheels"
                           f" ({', '.join(wheels[:3])}{', ...' if len(wheels) > 3 else ''})")),
        see=("nvjitlink-cusparse-symbol", "nccl-version-mismatch"),
    )


def check_container_cuda(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    """An image built on NVIDIA's CUDA images declares its CUDA; the runtime refuses an older driver."""
    env = facts.launch.env
    declared = env.get("CUDA_VERSION")
    if declared is None or env.get("NVIDIA_DISABLE_REQUIRE", "").strip().lower() in ("1", "true", "yes"):
        return
    image = _major_minor(declared)
    driver = facts.hardware.driver
    if image is None or driver is None:
        return
    if isinstance(driver, Unknown):
        yield cannot_check(matrix, CONTAINER, f"driver version: {driver.reason}")
        return
    try:
        top = matrix.cuda.max_cuda(driver)
    except ValueError as exc:
        yield cannot_check(matrix, CONTAINER, f"driver version {driver!r}: {exc}")
        return
    supported = _major_minor(top) if top is not None else None
    if supported is not None and image <= supported:
        return
    yield found(matrix, CONTAINER, evidence=(
        observed(f"CUDA_VERSION={declared} (the image's CUDA)"),
        observed(f"driver {driver}{declared_note(facts, 'driver')} supports CUDA <= {top or 'none in the matrix'}",
                 declared="driver" in facts.declared),
    ))
