"""A torch build read from its files (source "files") is judged as one read by importing it."""

from __future__ import annotations

from dataclasses import replace

from compat.judge.diagnose import diagnose
from compat.model.facts import Hardware, HardwareSource, TorchSource
from compat.model.findings import Status
from compat.report.essentials import torch_line
from tests.support.facts import facts, gpus, torch_build
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()
NO_ARCH = "gpu-arch-not-in-torch-build"


def _on_an_h100(arch_list: tuple[str, ...], source: TorchSource):
    build = replace(torch_build("2.5.1+cu124", arch_list=arch_list), source=source)
    hardware = Hardware(source=HardwareSource.NVML, driver="580.95.05", driver_cuda="13.0", gpus=gpus(1, cc="9.0"),
                        links=())
    return facts(torch=build, hardware=hardware)


def test_the_arch_list_read_from_the_files_decides_like_the_imported_one():
    for source in (TorchSource.IMPORT, TorchSource.FILES):
        missing = [f for f in diagnose(_on_an_h100(("sm_75", "sm_80"), source), MATRIX) if f.id == NO_ARCH]
        assert [f.status for f in missing] == [Status.FOUND]
        assert any("archs: sm_75 sm_80" in e.text for e in missing[0].evidence)
        covered = [f for f in diagnose(_on_an_h100(("sm_80", "sm_90"), source), MATRIX) if f.id == NO_ARCH]
        assert covered == []


def test_the_header_notes_only_a_build_read_neither_from_files_nor_by_import():
    assert torch_line(_on_an_h100(("sm_90",), TorchSource.FILES)).endswith("archs sm_90)")
    assert torch_line(_on_an_h100(("sm_90",), TorchSource.METADATA)).endswith("· from metadata")
