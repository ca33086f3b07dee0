"""matrix/builds.toml: other CUDA builds of vLLM (by wheel URL) and xformers (PyTorch index)."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.errors import MatrixError
from compat.matrix import load_matrix
from compat.matrix._toml import Table
from compat.matrix.builds import load_builds


def _table(release: dict) -> Table:
    return Table({"package": [{"name": "vllm", "source": "vllm-project/vllm#1", "release": [release]}]},
                 file="matrix/builds.toml", path="")


ROW = {"versions": ["0.7.3"], "default_cuda": "12.1", "source": "vllm-project/vllm@v0.7.3",
       "build": [{"cuda": "11.8", "wheel": "https://example.org/v{version}/vllm-{version}+cu118-cp{python}.whl",
                  "python": ">=3.8", "source": "vllm-project/vllm#10319"}]}


def test_the_shipped_builds_pair_a_build_with_torchs_cuda():
    builds = load_matrix().builds
    old = builds.build_for("vllm", Version("0.7.3"), "3.10", "11.8")
    assert old is not None and old.url("0.7.3", "3.10").endswith("/v0.7.3/vllm-0.7.3+cu118-cp38-abi3-manylinux1_x86_64.whl")
    per_python = builds.build_for("vllm", Version("0.4.0"), "3.10", "11.8")
    assert per_python is not None and per_python.url("0.4.0", "3.10").endswith("vllm-0.4.0+cu118-cp310-cp310-manylinux1_x86_64.whl")
    assert builds.build_for("vllm", Version("0.4.0"), "3.12", "11.8") is None  # no per-Python wheel for 3.12
    assert builds.other_majors("vllm", Version("0.6.2"), "3.10") == frozenset()  # no +cu118 asset
    assert builds.build_for("vllm", Version("0.22.0"), "3.11", "12.8").cuda == "12.9"  # same major, newest
    assert builds.other_majors("vllm", Version("0.11.1"), "3.11") == {"12", "13"}


@pytest.mark.parametrize(("change", "message"), [
    ({"default_cuda": "12"}, "release[0].default_cuda: '12' must be major.minor"),
    ({"versions": ["seven"]}, "release[0].versions[0]: 'seven' is not a version"),
    ({"build": []}, "release[0].build: a row needs at least one build besides the default index's"),
    ({"build": [{**ROW["build"][0], "cuda": "12.1"}]}, "release[0].build[0].cuda: 12.1 is the default index's build"),
    ({"build": [{**ROW["build"][0], "wheel": "http://x/{version}"}]}, "release[0].build[0].wheel: must be an https URL"),
    ({"build": [{**ROW["build"][0], "torch_index": True}]}, "release[0].build[0]: give either `wheel`"),
])
def test_a_bad_row_names_its_file_and_key(change, message):
    with pytest.raises(MatrixError) as err:
        load_builds([_table({**ROW, **change})])
    assert str(err.value).startswith("matrix/builds.toml: package[0].") and message in str(err.value)


def test_flashinfer_cubin_follows_flashinfer_python():
    step = load_matrix().builds.follows("flashinfer_cubin")
    assert step is not None and step.follows == "flashinfer-python" and "#" in step.source
    assert load_matrix().builds.follows("flashinfer-python") is None


def test_a_package_cannot_follow_itself():
    table = Table({"lockstep": [{"package": "flashinfer-cubin", "follows": "flashinfer_cubin", "source": "a/b#1"}]},
                  file="matrix/builds.toml", path="")
    with pytest.raises(MatrixError, match=r"matrix/builds.toml: lockstep\[0\].follows: a package cannot follow itself"):
        load_builds([table])
