"""The one way tests build `Facts`: `facts(**overrides)` and the builders of its parts.

`facts()` alone is a saved snapshot of a Linux box without GPUs: CPython 3.11.9, nothing installed, no
torch, launched by torchrun. Each keyword replaces one part; the builders below make the parts a test
usually varies (packages by name and version, a row of GPUs, a torch build, declared hardware, the
launch) so a test names only what it is about. `make_facts` is the declared box `compat lock` and
`compat plan` start from (what `--gpus`, `--driver` and `--python-version` give)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compat.model.facts import (
    SCHEMA_VERSION,
    Distribution,
    Facts,
    Gpu,
    Hardware,
    HardwareSource,
    Launch,
    Launcher,
    Python,
    TorchBuild,
    TorchSource,
)
from compat.model.unknown import Unknown
from compat.resolve import target_facts
from tests.support.fakeenv import requires_of

LINUX = {
    "implementation_name": "cpython", "implementation_version": "3.11.9", "os_name": "posix",
    "platform_machine": "x86_64", "platform_python_implementation": "CPython", "platform_release": "6.8.0",
    "platform_system": "Linux", "platform_version": "#1 SMP", "python_full_version": "3.11.9",
    "python_version": "3.11", "sys_platform": "linux",
}
"""The environment markers of CPython 3.11.9 on x86-64 Linux, as the probe records them."""

GPU_NAMES = {
    "7.0": "Tesla V100-SXM2-32GB",
    "8.0": "NVIDIA A100-SXM4-80GB",
    "9.0": "NVIDIA H100 80GB HBM3",
    "12.0": "NVIDIA GeForce RTX 5090",
}
"""The GPU `gpus()` names for a compute capability when the test does not name one."""

NO_HARDWARE = Hardware(source=HardwareSource.NONE, driver=None, driver_cuda=None, gpus=(), links=())
"""A machine without an NVIDIA driver, as a snapshot saved there records it."""

NOT_DECLARED = Unknown(reason="not declared")


def interpreter(
    *, version: str = "3.11.9", executable: str | Unknown = "python", markers: Mapping[str, str] | None = None,
    glibc: str | None = "2.35",
) -> Python:
    """The judged interpreter; no environment markers unless given (most checks read none)."""
    return Python(version=version, implementation="cpython", executable=executable, markers=dict(markers or {}),
                  glibc=glibc)


def distributions(packages: Mapping[str, str], *, requires: bool = False) -> tuple[Distribution, ...]:
    """Installed distributions by name and version, sorted by name; `requires=True` gives each the
    requirements the shipped matrix records for that release (as pip would have installed them)."""
    if requires:
        return tuple(Distribution(name=n, version=v, requires=tuple(requires_of(n, v))) for n, v in sorted(packages.items()))
    return tuple(Distribution(name=n, version=v, requires=()) for n, v in sorted(packages.items()))


def gpus(
    count: int, *, cc: str = "9.0", name: str | None = None, memory_mib: int = 81920,
    bus_id: str | Unknown = Unknown(reason="declared"),
) -> tuple[Gpu, ...]:
    """`count` identical GPUs of compute capability `cc` (named from GPU_NAMES unless `name` is given)."""
    model = name if name is not None else GPU_NAMES[cc]
    return tuple(Gpu(index=i, name=model, compute_capability=cc, memory_mib=memory_mib, bus_id=bus_id) for i in range(count))


def torch_build(
    version: str, *, cuda: str | None = "12.4", cudnn: str | None = "90100", nccl: str | None = "2.21.5",
    arch_list: tuple[str, ...] = ("sm_80", "sm_90"), cxx11_abi: bool = False,
) -> TorchBuild:
    """A torch build as importing it reports (a CUDA 12.4 build for Ampere and Hopper unless told)."""
    return TorchBuild(version=version, cuda=cuda, cudnn=cudnn, nccl=nccl, arch_list=arch_list, cxx11_abi=cxx11_abi,
                      source=TorchSource.IMPORT)


def declared_hardware(
    *, gpus: tuple[Gpu, ...] = (), driver: str | None = "580.95.05", driver_cuda: str | Unknown = Unknown(reason="declared"),
) -> Hardware:
    """Hardware as `--gpus` and `--driver` declare it: no probe, so the links between GPUs are unknown."""
    return Hardware(source=HardwareSource.DECLARED, driver=driver, driver_cuda=driver_cuda, gpus=gpus,
                    links=Unknown(reason="declared"))


def launch_by(
    launcher: Launcher | str | Unknown = Launcher.TORCHRUN, *, accelerate: Any = None,
    env: Mapping[str, str] | None = None, shm_bytes: int | Unknown = Unknown(reason="not probed"),
    container: str | None = None,
) -> Launch:
    """How training is started (torchrun, no accelerate config, /dev/shm not probed unless told)."""
    return Launch(launcher=launcher, accelerate=accelerate, env=dict(env or {}),  # type: ignore[arg-type]
                  shm_bytes=shm_bytes, container=container)


def facts(
    *, python: Python | None = None, packages: Mapping[str, str] | tuple[Distribution, ...] | Unknown = (),
    torch: str | TorchBuild | Unknown | None = None, hardware: Hardware = NO_HARDWARE, launch: Launch | None = None,
    **overrides: Any,
) -> Facts:
    """Facts with the defaults above; `packages` may be {name: version}, `torch` a version (see torch_build);
    any other Facts field (script, declared, system, requested) passes through."""
    return Facts(
        schema_version=SCHEMA_VERSION,
        python=python if python is not None else interpreter(),
        packages=distributions(packages) if isinstance(packages, Mapping) else packages,
        torch=torch_build(torch) if isinstance(torch, str) else torch,
        hardware=hardware,
        launch=launch if launch is not None else launch_by(),
        **overrides,
    )


def make_facts(
    *, gpus: int = 1, cc: str = "9.0", driver: str | None = "580.95.05", python: str = "3.11",
    launcher: Launcher | str | Unknown = NOT_DECLARED, packages: tuple[Distribution, ...] = (),
) -> Facts:
    """The declared box lock and plan start from: `gpus` GPUs of compute capability `cc`, a driver, the
    target Python `python` on linux-x86_64 (as `target_facts` lays it over the snapshot)."""
    base = facts(
        packages=tuple(packages),
        hardware=declared_hardware(gpus=_gpus(gpus, cc=cc), driver=driver),
        launch=launch_by(launcher, shm_bytes=Unknown(reason="declared")),
        declared=("gpus", "driver"),
    )
    return target_facts(base, python_version=python, platform="linux-x86_64")


_gpus = gpus
