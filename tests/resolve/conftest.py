"""A small matrix for lock tests: the shipped torch/CUDA tables, fixture releases and signatures.
The declared box they lock for is tests/support/facts.make_facts."""

from __future__ import annotations

import dataclasses
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

DATA = Path(__file__).parent / "data"
SHIPPED = shipped_matrix_dir()


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


@pytest.fixture(scope="session")
def own_wheels(extensions):
    """The shipped extension table without other publishers' rows: only the project's own wheels."""
    return dataclasses.replace(extensions, extensions=tuple(
        dataclasses.replace(e, releases=tuple(r for r in e.releases if r.publisher is None)) for e in extensions.extensions))
