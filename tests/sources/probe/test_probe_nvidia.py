from pathlib import Path

import pytest

from compat.model.facts import HardwareSource, Interconnect
from compat.model.unknown import Unknown
from compat.sources.probe.nvidia import (
    parse_proc_version,
    parse_query_gpu,
    parse_smi_header,
    parse_topo,
    probe_hardware,
)
from tests.sources.probe.probe_fakes import FakeNvml, fake_smi, read

NO_PROC = Path("/nonexistent/proc/driver/nvidia/version")


# ---------------------------------------------------------------- pure parsers on recorded output


@pytest.mark.parametrize("rel, driver, cuda", [
    ("h100-8x-sxm/nvidia-smi.txt", "550.54.15", "12.4"),
    ("rtx4090-pcie/nvidia-smi-banner.txt", "580.126.20", "13.0"),
    ("rtx5090-1x/nvidia-smi.txt", "595.71.05", "13.2"),
    ("t4-1x/nvidia-smi.txt", "418.67", "10.1"),  # the loaded driver, not the nvidia-smi binary (450.66)
    ("r470/nvidia-smi.txt", "580.95.05", "13.0"),
    ("banners/b200-r610.txt", "610.43.02", "13.3"),
])
def test_banner_versions(rel, driver, cuda):
    header = parse_smi_header(read(rel))
    assert (header.driver, header.cuda) == (driver, cuda)


def test_banner_cuda_na_is_unknown_with_the_text():
    header = parse_smi_header(read("banners/cuda-na.txt"))
    assert header.driver == "575.64.03"
    assert isinstance(header.cuda, Unknown) and "N/A" in header.cuda.reason


def test_topo_h100_is_nvlink_18_everywhere():
    links = parse_topo(read("h100-8x-sxm/topo-m.txt"))
    assert len(links) == 28
    assert {(link.interconnect, link.nvlinks) for link in links} == {(Interconnect.NVLINK, 18)}
    assert all(isinstance(link.p2p, Unknown) for link in links)


def test_topo_pcie_classes():
    links = {(link.a, link.b): link.interconnect for link in parse_topo(read("rtx4090-pcie/topo-m.txt"))}
    assert len(links) == 10
    assert links[(1, 2)] is Interconnect.PCIE_HOST_BRIDGE
    assert links[(1, 3)] is Interconnect.PCIE_CROSS_SOCKET  # NODE
    assert links[(0, 4)] is Interconnect.PCIE_CROSS_SOCKET  # SYS
    assert links[(3, 4)] is Interconnect.PCIE_HOST_BRIDGE


def test_topo_with_nic_rows_and_tabs():
    links = parse_topo(read("rtx4090-pcie/topo-m-8x-nics.txt"))
    assert len(links) == 28
    assert {link.interconnect for link in links} == {Interconnect.PCIE_CROSS_SOCKET}


def test_topo_two_gpus_tabs():
    (link,) = parse_topo(read("rtx5090-2x-pcie/topo-m.txt"))
    assert (link.a, link.b, link.interconnect, link.nvlinks) == (0, 1, Interconnect.PCIE_HOST_BRIDGE, 0)


def test_topo_cut_off_is_an_error():
    with pytest.raises(ValueError, match="no entry"):
        parse_topo(read("h100-8x-sxm/topo-m-tabs.txt"))


@pytest.mark.parametrize("text", ["", "garbage\x00\x01 output", "Failed to initialize NVML: Unknown Error\n"])
def test_topo_garbage_is_an_error(text):
    with pytest.raises(ValueError):
        parse_topo(text)


def test_query_by_header_with_other_columns():
    gpus, driver = parse_query_gpu(read("query/titan-v-rtx5880.csv"))
    assert driver == "570.86.15"
    assert [(g.index, g.name, g.compute_capability) for g in gpus] == [
        (0, "NVIDIA TITAN V", "7.0"), (1, "NVIDIA RTX 5880 Ada Generation", "8.9")]
    assert isinstance(gpus[0].memory_mib, Unknown) and isinstance(gpus[0].bus_id, Unknown)


def test_query_without_compute_cap_column_says_why():
    gpus, _ = parse_query_gpu("index, name, memory.total [MiB], pci.bus_id, driver_version\n"
                              "0, Tesla T4, 15109, 00000000:00:04.0, 470.82.01\n")
    assert gpus[0].memory_mib == 15109
    assert isinstance(gpus[0].compute_capability, Unknown)
    assert "R510" in gpus[0].compute_capability.reason


@pytest.mark.parametrize("text", ["", "no,header\n1,2\n", "index, name\n0\n", "index, name\nzero, x\n"])
def test_query_garbage_is_an_error(text):
    with pytest.raises(ValueError):
        parse_query_gpu(text)


@pytest.mark.parametrize("rel, version", [
    ("proc/proprietary-580.txt", "580.173.02"),
    ("proc/open-565.txt", "565.57.01"),
])
def test_proc_version(rel, version):
    assert parse_proc_version(read(rel)) == version


def test_proc_version_garbage():
    assert parse_proc_version("hello") is None


# ---------------------------------------------------------------- NVML (fake module injected)


def test_nvml_h100_nvswitch_counts_like_nvidia_smi():
    nvml = FakeNvml.shape("h100-8x-sxm")
    hw = probe_hardware(nvml=nvml, smi="/nonexistent/nvidia-smi", proc_version=NO_PROC)
    assert hw.source is HardwareSource.NVML
    assert (hw.driver, hw.driver_cuda) == ("550.54.15", "12.4")
    assert len(hw.gpus) == 8
    assert hw.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert (hw.gpus[0].compute_capability, hw.gpus[0].memory_mib, hw.gpus[0].bus_id) == ("9.0", 81559, "00000000:18:00.0")
    # The same answer nvidia-smi topo -m gives for this machine shape.
    from_smi = {(link.a, link.b): (link.interconnect, link.nvlinks) for link in parse_topo(read("h100-8x-sxm/topo-m.txt"))}
    assert {(link.a, link.b): (link.interconnect, link.nvlinks) for link in hw.links} == from_smi
    assert all(link.p2p is True for link in hw.links)
    assert nvml.calls == ["init", "shutdown"]


def test_nvml_pcie_matches_topo_and_reports_p2p_off():
    hw = probe_hardware(nvml=FakeNvml.shape("rtx4090-pcie"), smi="/nonexistent/nvidia-smi", proc_version=NO_PROC)
    from_smi = {(link.a, link.b): link.interconnect for link in parse_topo(read("rtx4090-pcie/topo-m.txt"))}
    assert {(link.a, link.b): link.interconnect for link in hw.links} == from_smi
    assert all(link.p2p is False and link.nvlinks == 0 for link in hw.links)
    assert hw.driver_cuda == "13.0"


@pytest.mark.parametrize("shape, cc, cuda", [("rtx5090-1x", "12.0", "13.2"), ("t4-1x", "7.5", "10.1"), ("rtx5090-2x-pcie", "12.0", "13.2")])
def test_nvml_small_shapes(shape, cc, cuda):
    hw = probe_hardware(nvml=FakeNvml.shape(shape), smi="/nonexistent/nvidia-smi", proc_version=NO_PROC)
    assert hw.gpus[0].compute_capability == cc and hw.driver_cuda == cuda
    assert len(hw.links) == len(hw.gpus) * (len(hw.gpus) - 1) // 2


def test_nvml_field_error_is_unknown_not_a_crash():
    nvml = FakeNvml.shape("t4-1x")

    def broken(h):
        raise nvml.NVMLError("Not Supported")

    nvml.nvmlDeviceGetCudaComputeCapability = broken
    hw = probe_hardware(nvml=nvml, smi="/nonexistent/nvidia-smi", proc_version=NO_PROC)
    assert isinstance(hw.gpus[0].compute_capability, Unknown)
    assert "Not Supported" in hw.gpus[0].compute_capability.reason
    assert hw.gpus[0].memory_mib == 15079


# ---------------------------------------------------------------- fallbacks: nvidia-smi, /proc, nothing


def _no_nvml():
    return FakeNvml({}, init_error="NVML Shared Library Not Found")


def test_smi_fallback_when_nvml_cannot_load(tmp_path):
    smi = fake_smi(tmp_path, query=read("query/titan-v-rtx5880.csv"), banner=read("rtx4090-pcie/nvidia-smi-banner.txt"),
                   topo=read("rtx5090-2x-pcie/topo-m.txt"))
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=5)
    assert hw.source is HardwareSource.NVIDIA_SMI
    assert hw.driver == "570.86.15"  # from the query; the banner only adds the CUDA version
    assert hw.driver_cuda == "13.0"
    assert [g.compute_capability for g in hw.gpus] == ["7.0", "8.9"]
    assert hw.links[0].interconnect is Interconnect.PCIE_HOST_BRIDGE


def test_r470_smi_retries_without_compute_cap(tmp_path):
    smi = fake_smi(tmp_path, query=read("r470/query-compute-cap.txt"), query_exit=2,
                   query_no_cc="index, name, memory.total [MiB], pci.bus_id, driver_version\n"
                               "0, NVIDIA RTX PRO ..., 8151, 00000000:01:00.0, 580.95.05\n",
                   banner=read("r470/nvidia-smi.txt"))
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=5)
    assert hw.source is HardwareSource.NVIDIA_SMI
    assert hw.gpus[0].memory_mib == 8151
    assert isinstance(hw.gpus[0].compute_capability, Unknown)
    assert hw.links == ()


def test_hanging_smi_becomes_unknown_with_reason(tmp_path):
    smi = fake_smi(tmp_path, body="#!/bin/sh\nsleep 30\n")
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=0.5)
    assert isinstance(hw.gpus, Unknown)
    assert "nvidia-smi timed out after 0.5 s" in hw.gpus.reason
    assert "NVML Shared Library Not Found" in hw.gpus.reason


def test_garbage_smi_becomes_unknown(tmp_path):
    smi = fake_smi(tmp_path, body="#!/bin/sh\nprintf 'garbage\\377\\376 42\\n'\n")
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=5)
    assert isinstance(hw.gpus, Unknown) and "cannot read" in hw.gpus.reason


def test_broken_driver_falls_back_to_proc(tmp_path):
    proc = tmp_path / "version"
    proc.write_text(read("proc/proprietary-580.txt"))
    smi = fake_smi(tmp_path / "bin", body="#!/bin/sh\ncat <<'X'\n" + read("proc/mismatch-smi.txt") + "X\nexit 18\n")
    hw = probe_hardware(nvml=FakeNvml({}, init_error="Driver/library version mismatch"), smi=smi, proc_version=proc, timeout=5)
    assert hw.source is HardwareSource.PROC
    assert hw.driver == "580.173.02"
    assert isinstance(hw.gpus, Unknown) and "version mismatch" in hw.gpus.reason


def test_no_nvidia_at_all():
    hw = probe_hardware(nvml=_no_nvml(), smi="/nonexistent/nvidia-smi", proc_version=NO_PROC)
    assert (hw.source, hw.driver, hw.driver_cuda, hw.gpus, hw.links) == (HardwareSource.NONE, None, None, (), ())


def test_smi_topology_and_banner_failures_are_unknown_with_the_reason(tmp_path):
    # topo and the banner exit 9 (not stashed): the GPUs are still read, links and CUDA are unknown.
    smi = fake_smi(tmp_path, query=read("query/titan-v-rtx5880.csv"))
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=5)
    assert hw.source is HardwareSource.NVIDIA_SMI
    assert len(hw.gpus) == 2
    assert hw.links == Unknown(reason="nvidia-smi exited with status 9")
    assert hw.driver_cuda == Unknown(reason="nvidia-smi exited with status 9")


def test_smi_topology_garbage_is_unknown(tmp_path):
    smi = fake_smi(tmp_path, query=read("query/titan-v-rtx5880.csv"), banner=read("rtx4090-pcie/nvidia-smi-banner.txt"),
                   topo="nothing like a matrix\n")
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=NO_PROC, timeout=5)
    assert isinstance(hw.links, Unknown)
    assert hw.links.reason.startswith("nvidia-smi topo -m printed something compat cannot read")


def test_a_proc_file_without_a_driver_and_a_failing_smi(tmp_path):
    proc = tmp_path / "version"
    proc.write_text("not the NVIDIA module\n")
    smi = fake_smi(tmp_path / "bin", body="#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    hw = probe_hardware(nvml=_no_nvml(), smi=smi, proc_version=proc, timeout=5)
    assert hw.source is HardwareSource.NONE
    assert isinstance(hw.driver, Unknown) and "NVIDIA-SMI has failed" in hw.driver.reason
    assert "NVML Shared Library Not Found" in hw.driver.reason
