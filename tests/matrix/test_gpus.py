"""matrix/gpus.toml: the shipped models, name matching, and the loader's errors."""

from pathlib import Path

import pytest

from compat.errors import MatrixError
from compat.matrix import load_matrix

REQUIRED = ["H100", "H200", "H100-PCIE", "A100-80GB", "A100-40GB", "A100", "A10G", "A10", "L4", "L40S", "T4", "V100", "P100", "RTX3090", "RTX4090", "RTX5090", "RTX6000-ADA", "RTX-PRO-6000", "B200", "GB200", "B300", "GH200", "H20"]


@pytest.fixture(scope="module")
def gpus():
    return load_matrix().gpus


def test_every_model_has_a_source_and_the_required_names_exist(gpus):
    assert all(m.source.strip() for m in gpus.models)
    names = gpus.names()
    assert len(set(names)) == len(names)
    for name in REQUIRED:
        assert name in names


# Names as NVML / nvidia-smi print them, and as people type them in --gpus.
@pytest.mark.parametrize(
    "name, model",
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H100 PCIe", "H100-PCIE"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40", "L40"),
        ("NVIDIA L40S", "L40S"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-32GB", "V100"),
        ("Tesla V100-SXM2-16GB", "V100-16GB"),
        ("Tesla P100-PCIE-16GB", "P100"),
        ("NVIDIA GeForce RTX 3090", "RTX3090"),
        ("NVIDIA GeForce RTX 3090 Ti", "RTX3090-TI"),
        ("NVIDIA GeForce RTX 4090", "RTX4090"),
        ("NVIDIA GeForce RTX 4090 D", "RTX4090"),  # extra word: longest whole-word match
        ("NVIDIA GeForce RTX 5090", "RTX5090"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX6000-ADA"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-SERVER"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA B300 SXM6 AC", "B300"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA H20", "H20"),
        ("NVIDIA GB10", "GB10"),
        ("h100", "H100"),
        ("h100 sxm", "H100"),
        ("a100_80gb", "A100-80GB"),
        ("rtx 4090", "RTX4090"),
        ("RTX-4090", "RTX4090"),
        ("geforce rtx5090", "RTX5090"),
    ],
)
def test_find(gpus, name, model):
    found = gpus.find(name)
    assert found is not None and found.name == model


@pytest.mark.parametrize("name", ["", "NVIDIA", "NVIDIA RTX A1000", "H1000", "Radeon RX 7900", "L"])
def test_find_returns_none_without_a_whole_word_match(gpus, name):
    assert gpus.find(name) is None


def test_every_alias_finds_its_own_model(gpus):
    for model in gpus.models:
        for name in (model.name, *model.aliases):
            assert gpus.find(name) is model, name


@pytest.mark.parametrize(
    "name, cc, memory, interconnect, consumer",
    [
        ("H100", "9.0", 80, "nvlink", False),
        ("H100-PCIE", "9.0", 80, "pcie", False),
        ("A100", "8.0", 80, "nvlink", False),
        ("L4", "8.9", 24, "pcie", False),
        ("RTX4090", "8.9", 24, "pcie", True),
        ("RTX5090", "12.0", 32, "pcie", True),
        ("B300", "10.3", 288, "nvlink", False),
        ("V100", "7.0", 32, "nvlink", False),
    ],
)
def test_model_facts(gpus, name, cc, memory, interconnect, consumer):
    m = gpus.find(name)
    assert (m.compute_capability, m.memory_gib, m.interconnect, m.consumer) == (cc, memory, interconnect, consumer)


def test_ambiguous_a100_says_what_it_assumed(gpus):
    assert "80 GB" in gpus.find("A100").note


# --- loader errors ----------------------------------------------------------------------------

ROW = '[[gpu]]\nname = "X9"\naliases = ["NVIDIA X9 Ultra"]\ncompute_capability = "13.0"\nmemory_gib = 256\ninterconnect = "nvlink"\nconsumer = false\nsource = "x"\n'


def _error(tmp_path: Path, text: str) -> str:
    (tmp_path / "gpus.toml").write_text(text, encoding="utf-8")
    with pytest.raises(MatrixError) as info:
        load_matrix([tmp_path])
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / "gpus.toml") in message
    return message


def test_an_overlay_can_add_a_model(tmp_path):
    (tmp_path / "gpus.toml").write_text(ROW, encoding="utf-8")
    assert load_matrix([tmp_path]).gpus.find("NVIDIA X9 Ultra").compute_capability == "13.0"


def test_broken_toml(tmp_path):
    assert "invalid TOML" in _error(tmp_path, "[[gpu]]\nname = X9\n")


def test_unknown_key(tmp_path):
    assert "gpu[0].memory_gb: unknown key" in _error(tmp_path, ROW.replace("memory_gib", "memory_gb"))


@pytest.mark.parametrize(
    "old, new, key",
    [
        ('compute_capability = "13.0"', 'compute_capability = "sm_130"', "gpu[0].compute_capability"),
        ("memory_gib = 256", 'memory_gib = "256GB"', "gpu[0].memory_gib"),
        ("memory_gib = 256", "memory_gib = 0", "gpu[0].memory_gib"),
        ('interconnect = "nvlink"', 'interconnect = "infiniband"', "gpu[0].interconnect"),
        ('name = "X9"', 'name = "X9 Ultra!"', "gpu[0].name"),
        ('interconnect = "nvlink"', 'interconnect = "pcie"\nnvlinks = 18', "gpu[0].nvlinks"),
        ('aliases = ["NVIDIA X9 Ultra"]', 'aliases = ["NVIDIA"]', "gpu[0].aliases[0]"),
    ],
)
def test_bad_values_name_the_key(tmp_path, old, new, key):
    assert key in _error(tmp_path, ROW.replace(old, new))


def test_an_alias_two_models_share_names_both_files(tmp_path):
    message = _error(tmp_path, ROW.replace('"NVIDIA X9 Ultra"', '"NVIDIA H100 80GB HBM3"'))
    assert "gpu[0].aliases[0]" in message and "also names H100 at matrix/gpus.toml: gpu[0]" in message
