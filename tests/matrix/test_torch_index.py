"""`compat matrix validate` holds matrix/torch.toml against a listing of the PyTorch index (torch-index.txt).

No recording of the index's listing was found to ship (the index is not reachable from here), so these tests use a
small sample in the listing's shape: file names as the simple page links them, URL-quoted or not, with wheels of
other platforms and ROCm builds that the check must pass over. Its cu129 wheel of torch 2.11.0 and its lack of a
cu132 wheel of torch 2.12.0 are made up to make the check fire; nothing here is a fact about the index.
"""

from __future__ import annotations

from packaging.version import Version

from compat.maintain.torch_index import LISTING, listed_builds
from compat.maintain.validate import validate_matrix
from tests.support.matrix import shipped_validation

SAMPLE = """\
<a href="/whl/cu129/torch-2.10.0%2Bcu129-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=00">torch-2.10.0+cu129-cp312-cp312-manylinux_2_28_x86_64.whl</a>
torch-2.10.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.10.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl
torch-2.10.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.10.0+rocm6.4-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.10.0+cu128-cp312-cp312-manylinux_2_28_aarch64.whl
torch-2.10.0+cu128-cp312-cp312-win_amd64.whl
torch-2.10.0-cp312-none-macosx_11_0_arm64.whl
torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.11.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.11.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.11.0+cu129-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.11.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.12.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.12.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl
torch-2.12.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl
"""


def test_the_listing_is_read_as_linux_x86_64_builds_per_release():
    builds = listed_builds(SAMPLE)
    assert builds[Version("2.10.0")] == {"cu126", "cu128", "cu129", "cu130", "cpu", "rocm6.4"}
    assert builds[Version("2.12.0")] == {"cu126", "cu130", "cpu"}
    assert Version("2.9.0") not in builds


def test_validate_names_each_build_torch_toml_lacks_or_the_index_lacks(tmp_path):
    (tmp_path / LISTING).write_text(SAMPLE)
    problems = [p for p in validate_matrix((tmp_path,), audit_patterns=False).problems if "PyTorch index" in p]
    assert problems == [
        "matrix/torch.toml: release[21].variants: the PyTorch index lists cu129 of torch 2.11.0; add it",
        "matrix/torch.toml: release[22].variants: cu132 of torch 2.12.0 is not on the PyTorch index (torch-index.txt)",
    ]


def test_without_a_listing_nothing_is_compared():
    assert not [p for p in shipped_validation().problems if "PyTorch index" in p]
