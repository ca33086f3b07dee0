"""matrix/torch.toml: releases, variants, arch lists, the binary-compatibility rule, loader errors."""

from pathlib import Path

import pytest

from compat.errors import MatrixError
from compat.matrix import load_matrix
from compat.matrix.torch import arch_list_runs_on, cuda_variant
from compat.model.torch_variant import Accelerator, TorchVariant

ALL_RELEASES = ["2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.1.2", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1", "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]


@pytest.fixture(scope="module")
def torch():
    return load_matrix().torch


def test_every_release_2_0_to_2_15_is_curated_in_order(torch):
    assert [r.version for r in torch.releases] == ALL_RELEASES


def test_every_row_has_a_source_and_a_consistent_default(torch):
    for rel in torch.releases:
        assert rel.source.strip(), rel.version
        assert rel.default_variant in rel.variants
        assert V("cpu") in rel.variants
    assert all(row.source.strip() for row in torch.arch_lists)


def test_every_cuda_variant_has_an_arch_list(torch):
    for rel in torch.releases:
        for variant in rel.variants:
            if not variant.is_cpu:
                row = torch.archs(rel.version, variant)
                assert row is not None and row.variant == variant, (rel.version, variant)


@pytest.mark.parametrize(
    "version, default",
    [
        ("2.0.1", "cu117"),
        ("2.1.0", "cu121"),
        ("2.4.1", "cu121"),
        ("2.5.1", "cu124"),
        ("2.6.0", "cu124"),
        ("2.7.1", "cu126"),
        ("2.8.0", "cu128"),
        ("2.10.0", "cu128"),
        ("2.11.0", "cu130"),
        ("2.14.1", "cu130"),  # METADATA says cuda-toolkit==13.0.3, whatever the RFC claims
        ("2.15.0", "cu132"),
    ],
)
def test_public_index_default_variant(torch, version, default):
    assert torch.release(version).default_variant == V(default)


def test_default_cuda(torch):
    assert torch.release("2.11.0").default_cuda == "13.0"


@pytest.mark.parametrize(
    "version, python, has_wheels",
    [
        ("2.0.0", "3.8", True),
        ("2.0.0", "3.12", False),
        ("2.2.0", "3.12", True),
        ("2.5.1", "3.8", False),  # says >=3.8, ships no cp38 wheel
        ("2.5.1", "3.13", True),
        ("2.9.0", "3.14", True),
        ("2.15.0", "3.10", False),
        ("2.15.0", "3.15", True),
    ],
)
def test_python_wheels(torch, version, python, has_wheels):
    assert torch.release(version).python.contains(python) is has_wheels


@pytest.mark.parametrize("version, abi", [("2.5.1", False), ("2.6.0", False), ("2.7.0", True), ("2.15.0", True)])
def test_cxx11_abi_of_the_default_build(torch, version, abi):
    assert torch.release(version).cxx11_abi is abi


def test_release_strips_the_local_tag_and_rejects_junk(torch):
    assert torch.release("2.5.1+cu124").version == "2.5.1"
    assert torch.release("1.13.1") is None
    assert torch.release("not a version") is None


@pytest.mark.parametrize(
    "version, variant, cc, runs",
    [
        ("2.5.1", "cu124", "12.0", False),  # RTX 5090 on a cu124 build: no kernel image
        ("2.8.0", "cu128", "12.0", True),
        ("2.11.0", "cu130", "7.0", False),  # V100 on CUDA 13
        ("2.8.0", "cu128", "8.9", True),  # sm_86 cubins run on Ada
        ("2.11.0", "cu126", "7.0", True),  # V100 keeps the cu126 index
        ("2.10.0", "cu128", "7.0", True),
        ("2.11.0", "cu128", "7.0", False),  # Volta dropped from cu128 in 2.11
        ("2.8.0", "cu128", "6.0", False),  # Pascal dropped from cu128
        ("2.7.1", "cu126", "12.0", False),
        ("2.7.1", "cu128", "12.0", True),
        ("2.8.0", "cu128", "10.3", True),  # B300 runs sm_100 cubins
        ("2.10.0", "cu128", "12.1", True),  # GB10 runs sm_120 cubins
        ("2.10.0", "cu128", "13.0", False),  # a newer major needs PTX; cu128 ships none
        ("2.11.0", "cu130", "13.0", True),  # ... cu130 ships compute_120
        ("2.9.0", "cu129", "7.0", True),  # the cu129 builds of 2.9 and 2.10 exist (projects install them) ...
        ("2.9.1", "cu129", "13.0", True),  # ... and ship compute_120 as 2.8's did
        ("2.10.0", "cu129", "9.0", True),
        ("2.5.1+cu124", "cu124", "9.0", True),
        ("2.0.1", "cu117", "9.0", False),  # H100 on the 2.0 default build
        ("2.0.1", "cu118", "9.0", True),
        ("2.5.1", "cpu", "8.0", False),
    ],
)
def test_runs_on(torch, version, variant, cc, runs):
    assert torch.runs_on(version, V(variant), cc) is runs


def test_runs_on_is_none_when_not_curated(torch):
    assert torch.runs_on("1.13.1", V("cu117"), "8.0") is None
    assert torch.runs_on("2.11.0", V("cu118"), "8.0") is None  # no such build
    assert torch.runs_on("2.11.0", V("cu129"), "9.0") is None  # 2.11 has no cu129 build


def test_index_url(torch):
    assert torch.index_url(V("cu124")) == "https://download.pytorch.org/whl/cu124"
    assert torch.index_url(V("cpu")) == "https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize(
    "variant, cuda", [("cu124", "12.4"), ("cu118", "11.8"), ("cu130", "13.0"), ("cu92", "9.2"), ("cpu", None), ("rocm6.2", None)]
)
def test_variant_cuda(variant, cuda):
    assert V(variant).cuda == cuda


@pytest.mark.parametrize("cuda, variant", [("12.4", "cu124"), ("12.4.1", "cu124"), ("13.0", "cu130"), ("11.8", "cu118")])
def test_cuda_variant(cuda, variant):
    assert cuda_variant(cuda) == V(variant)


def test_cuda_variant_rejects_junk():
    with pytest.raises(ValueError):
        cuda_variant("twelve")


V = TorchVariant.parse


@pytest.mark.parametrize(
    ("label", "accelerator", "cuda_major"),
    [("cpu", Accelerator.CPU, None), ("cu118", Accelerator.CUDA, 11), ("cu130", Accelerator.CUDA, 13),
     ("rocm6.2", Accelerator.ROCM, None), ("xpu", Accelerator.XPU, None)],
)
def test_a_variant_knows_its_accelerator_and_cuda(label, accelerator, cuda_major):
    v = V(label)
    assert (v.accelerator, v.cuda_major, v.is_cpu, str(v)) == (accelerator, cuda_major, label == "cpu", label)


@pytest.mark.parametrize("label", ["cu", "cuda124", "cu12345", "rocm", "CPU", "", "abc", "cu" + "1" * 5000])
def test_a_label_that_names_no_build_is_refused(label):
    with pytest.raises(ValueError, match="is not a torch build variant"):
        V(label)
    assert TorchVariant.find(label) is None


def test_variants_sort_cpu_then_cuda_by_runtime_then_rocm_and_xpu():
    labels = ["xpu", "cu130", "rocm6.2", "cu92", "cpu", "cu128", "rocm5.7", "cu118"]
    assert [str(v) for v in sorted(map(V, labels))] == ["cpu", "cu92", "cu118", "cu128", "cu130", "rocm5.7", "rocm6.2", "xpu"]


def test_a_variant_from_a_local_version_label():
    assert TorchVariant.of_version("2.6.0+cu124") == V("cu124")
    assert TorchVariant.of_version("2.6.0") is None
    assert TorchVariant.of_version("2.6.0+ubuntu1") is None  # a distro's tag names no build


# torch.cuda.get_arch_list() of 2.8.0+cu129 as quoted in pytorch/pytorch#158700.
ARCH_LIST_CU129 = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]


@pytest.mark.parametrize(
    "arch_list, cc, runs",
    [
        (ARCH_LIST_CU129, "8.9", True),
        (ARCH_LIST_CU129, "12.1", True),
        (ARCH_LIST_CU129, "13.0", True),  # PTX
        (ARCH_LIST_CU129, "6.1", False),
        (ARCH_LIST_CU129[:-1], "13.0", False),
        (["sm_90a"], "9.0", True),
        (["sm_90a"], "10.0", False),  # arch-specific cubins run on that GPU only
        ([], "8.0", False),
    ],
)
def test_arch_list_runs_on(arch_list, cc, runs):
    assert arch_list_runs_on(arch_list, cc) is runs


# --- loader errors ----------------------------------------------------------------------------

RELEASE = '[[release]]\nversion = "2.16.0"\npython = ">=3.11,<3.16"\ndefault = "cu132"\nvariants = ["cu132", "cpu"]\ncxx11_abi = true\nsource = "x"\n'


def _error(tmp_path: Path, text: str) -> str:
    (tmp_path / "torch.toml").write_text(text, encoding="utf-8")
    with pytest.raises(MatrixError) as info:
        load_matrix([tmp_path])
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / "torch.toml") in message
    return message


def test_an_overlay_can_add_a_release(tmp_path):
    (tmp_path / "torch.toml").write_text(RELEASE, encoding="utf-8")
    torch = load_matrix([tmp_path]).torch
    assert torch.runs_on("2.16.0", V("cu132"), "9.0") is True  # covered by the shipped ">=2.12" row


def test_broken_toml(tmp_path):
    assert "invalid TOML" in _error(tmp_path, '[[release]]\nversion = "2.16.0\n')


def test_unknown_key(tmp_path):
    message = _error(tmp_path, RELEASE.replace("cxx11_abi", "cxx_abi"))
    assert "release[0].cxx_abi: unknown key" in message


@pytest.mark.parametrize(
    "old, new, key",
    [
        ('version = "2.16.0"', 'version = "2.16.x"', "release[0].version"),
        ('version = "2.16.0"', 'version = "2.16.0+cu132"', "release[0].version"),
        ('python = ">=3.11,<3.16"', 'python = "3.11+"', "release[0].python"),
        ('default = "cu132"', 'default = "cu999"', "release[0].default"),
        ('"cu132", "cpu"', '"cuda13", "cpu"', "release[0].variants[0]"),
        ("cxx11_abi = true", 'cxx11_abi = "yes"', "release[0].cxx11_abi"),
    ],
)
def test_bad_release_values_name_the_key(tmp_path, old, new, key):
    assert key in _error(tmp_path, RELEASE.replace(old, new))


def test_duplicate_release_across_an_overlay_names_both_files(tmp_path):
    message = _error(tmp_path, RELEASE.replace("2.16.0", "2.5.1"))
    assert "release[0].version" in message and "also defined at matrix/torch.toml: release[13]" in message


def test_a_cuda_variant_without_an_arch_list(tmp_path):
    message = _error(tmp_path, RELEASE.replace('"cu132", "cpu"', '"cu132", "cu140", "cpu"'))
    assert "release[0].variants" in message and "cu140" in message


def test_an_arch_list_that_overlaps_a_shipped_row(tmp_path):
    row = '[[arch_list]]\ntorch = ">=2.11"\nvariant = "cu130"\narchs = ["8.0"]\nptx = true\nsource = "x"\n'
    message = _error(tmp_path, row)
    assert "arch_list[0].torch" in message and "also covered by matrix/torch.toml: arch_list[" in message


def test_a_bad_arch(tmp_path):
    row = '[[arch_list]]\ntorch = ">=3.0"\nvariant = "cu140"\narchs = ["sm_100"]\nptx = true\nsource = "x"\n'
    assert "arch_list[0].archs[0]" in _error(tmp_path, row)


def test_a_second_index(tmp_path):
    message = _error(tmp_path, '[index]\nurl = "https://mirror.example/{variant}"\nsource = "x"\n')
    assert "index: also defined at matrix/torch.toml: index" in message


def test_an_index_without_a_variant_placeholder(tmp_path):
    assert "index.url: must contain {variant}" in _error(tmp_path, '[index]\nurl = "https://mirror.example/"\nsource = "x"\n')
