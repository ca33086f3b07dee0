"""A small matrix for lock tests: the shipped torch/CUDA tables, fixture releases and signatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.matrix import Matrix, shipped_matrix_dir
from compat.matrix._toml import read_toml
from compat.matrix.cuda import load_cuda
from compat.matrix.extensions import load_extensions_from
from compat.matrix.gpus import GpuTable
from compat.matrix.releases import ReleaseIndex
from compat.matrix.signatures import load_signatures
from compat.matrix.torch import load_torch
from compat.model.facts import Facts, Gpu, Hardware, HardwareSource, Launch, Python
from compat.model.unknown import Unknown
from compat.resolve import target_facts

DATA = Path(__file__).parent / "data"
SHIPPED = shipped_matrix_dir()

NOT_DECLARED = Unknown(reason="not declared")

GPU_NAMES = {
    "8.0": "NVIDIA A100-SXM4-80GB",
    "9.0": "NVIDIA H100 80GB HBM3",
    "7.0": "Tesla V100-SXM2-32GB",
    "12.0": "NVIDIA GeForce RTX 5090",
}


@pytest.fixture(scope="session")
def matrix() -> Matrix:
    root = DATA / "matrix"
    sig_dir = root / "signatures"
    return Matrix(
        cuda=load_cuda([read_toml(SHIPPED / "cuda.toml")]),
        torch=load_torch([read_toml(SHIPPED / "torch.toml")]),
        gpus=GpuTable(models=()),
        extensions=load_extensions_from([SHIPPED]),
        releases=ReleaseIndex((root / "releases",)),
        signatures=load_signatures([(read_toml(p), p.stem) for p in sorted(sig_dir.glob("*.toml"))]),
        roots=(root,),
    )


@pytest.fixture(scope="session")
def extensions():
    return load_extensions_from([SHIPPED])


def make_facts(
    *,
    gpus: int = 1,
    cc: str = "9.0",
    driver: str | None = "580.95.05",
    python: str = "3.11",
    launcher: str | Unknown = NOT_DECLARED,
    packages=(),
) -> Facts:
    base = Facts(
        schema_version=1,
        python=Python(version="3.11.9", implementation="cpython", executable="python", markers={}, glibc="2.35"),
        packages=tuple(packages),
        torch=None,
        hardware=Hardware(
            source=HardwareSource.DECLARED,
            driver=driver,
            driver_cuda=Unknown(reason="declared"),
            gpus=tuple(
                Gpu(index=i, name=GPU_NAMES[cc], compute_capability=cc, memory_mib=81920, bus_id=Unknown(reason="declared"))
                for i in range(gpus)
            ),
            links=Unknown(reason="declared"),
        ),
        launch=Launch(launcher=launcher, accelerate=None, env={}, shm_bytes=Unknown(reason="declared"), container=None),
        declared=("gpus", "driver"),
    )
    return target_facts(base, python_version=python, platform="linux-x86_64")
