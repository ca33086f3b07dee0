"""parse_torch on the reports a torch child prints, including partial and odd ones."""

from __future__ import annotations

import json

import pytest

from compat.matrix import Matrix, load_matrix
from compat.model.facts import Distribution, TorchSource
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult
from compat.sources.probe.torch import MARK, cuda_of_variant, cuda_of_version, import_error, parse_torch

TORCH = Distribution(name="torch", version="2.5.1+cu124", requires=())


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix()


def _report(data: dict) -> RunResult:
    return RunResult(argv=("python",), returncode=0, stdout=f"noise\n{MARK}{json.dumps(data)}\n", stderr="")


def test_a_report_with_unknown_and_missing_fields(matrix):
    build = parse_torch(_report({
        "installed": True, "version": "2.5.1+rocm6.2", "cuda": None, "hip": "6.2.41133",
        "cudnn": {"unknown": "cudnn not loadable"}, "arch_list": {"unknown": "no GPU backend"},
        "cxx11_abi": "yes", "debug": False,
    }), TORCH, matrix)
    assert build is not None and not isinstance(build, Unknown)
    assert build.source is TorchSource.IMPORT
    assert (build.cuda, build.hip) == (None, "6.2.41133")
    assert build.cudnn == Unknown(reason="cudnn not loadable")
    assert build.nccl is None
    assert build.arch_list == Unknown(reason="no GPU backend")
    assert build.cxx11_abi == Unknown(reason="torch did not report its C++ ABI")
    assert build.xnnpack == Unknown(reason="torch did not report whether XNNPACK is enabled")
    assert parse_torch(_report({"installed": True, "version": "2.6.0", "arch_list": "sm_90"}), TORCH, matrix).arch_list == (
        Unknown(reason="torch reported no architecture list")
    )


def test_not_installed_and_no_metadata_is_none(matrix):
    assert parse_torch(_report({"installed": False}), None, matrix) is None


def test_a_failed_import_with_unknown_packages(matrix):
    failed = RunResult(argv=("python",), returncode=1, stdout="", stderr="Traceback...\nImportError: libcudart.so.12: cannot open\n")
    build = parse_torch(failed, Unknown(reason="pip list failed"), matrix)
    assert build == Unknown(reason="import torch failed (ImportError: libcudart.so.12: cannot open) and the installed packages are unknown")
    assert parse_torch(failed, None, matrix) is None


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (RunResult(argv=("python",), returncode=None, stdout="", stderr="", error="python timed out after 60 s", timed_out_after=60.0),
         "import torch did not finish within 60 s"),
        # the outcome is read from the record, never from the wording of the error
        (RunResult(argv=("python",), returncode=None, stdout="", stderr="", error="python timed out after 60 s"),
         "python timed out after 60 s"),
        (RunResult(argv=("python",), returncode=None, stdout="", stderr="", error="python not found"), "python not found"),
        (RunResult(argv=("python",), returncode=-11, stdout="", stderr=""), "import torch was killed by SIGSEGV"),
        (RunResult(argv=("python",), returncode=1, stdout="", stderr=""), "python exited with status 1"),
    ],
)
def test_import_error_in_one_line(result, message):
    assert import_error(result) == message


def test_cuda_of_variants_and_versions(matrix):
    assert cuda_of_variant("cu124") == "12.4"
    assert cuda_of_variant("cpu") is None
    assert cuda_of_variant("rocm6.2") is None
    assert cuda_of_variant("xpu") is None
    assert cuda_of_variant("weird") == Unknown(reason="unrecognized torch variant 'weird'")
    assert cuda_of_version("2.5.1+cu121", matrix) == "12.1"
    assert isinstance(cuda_of_version("2.5.1", matrix), str)  # the matrix's default variant
    assert cuda_of_version("0.0.1", matrix) == Unknown(
        reason="torch 0.0.1 has no local tag and its default CUDA variant is not in the matrix"
    )
