"""Declared hardware (--gpus, --driver, --launcher) laid over probed facts."""


import pytest
from packaging.specifiers import SpecifierSet

from compat.errors import UsageError
from compat.judge.conditions import Outcome, evaluate
from compat.matrix import load_matrix
from compat.matrix.when import When
from compat.model.facts import Facts, Gpu, Hardware, HardwareSource, Interconnect
from compat.model.unknown import Unknown
from compat.sources.declared import Declared, apply_declared, parse_gpus
from tests.support.facts import NO_HARDWARE, facts, interpreter, launch_by


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _facts(hardware: Hardware | None = None, declared: tuple[str, ...] = ()) -> Facts:
    """A Docker build machine: no driver, no GPUs."""
    return facts(
        python=interpreter(version="3.11.7", executable="/usr/bin/python3", markers={"python_version": "3.11"}, glibc="2.36"),
        hardware=hardware or NO_HARDWARE,
        launch=launch_by(Unknown(reason="not declared"), shm_bytes=64 * 2**20, container="docker"),
        declared=declared,
    )


PROBED = Hardware(
    source=HardwareSource.NVML,
    driver="570.124.06",
    driver_cuda="12.8",
    gpus=(Gpu(index=0, name="NVIDIA L4", compute_capability="8.9", memory_mib=23034, bus_id="00000000:00:03.0"),),
    links=(),
)


@pytest.mark.parametrize(
    "spec, count, name, cc, memory_mib",
    [
        ("8xH100", 8, "H100", "9.0", 80 * 1024),
        ("H100", 1, "H100", "9.0", 80 * 1024),
        ("2xA100-80GB", 2, "A100-80GB", "8.0", 80 * 1024),
        ("2x a100-40gb", 2, "A100-40GB", "8.0", 40 * 1024),
        ("1xRTX5090", 1, "RTX5090", "12.0", 32 * 1024),
        ("4 x RTX4090", 4, "RTX4090", "8.9", 24 * 1024),
        ("8XB200", 8, "B200", "10.0", 180 * 1024),
        ("64xT4", 64, "T4", "7.5", 16 * 1024),
        ("2xNVIDIA GeForce RTX 3090", 2, "RTX3090", "8.6", 24 * 1024),
    ],
)
def test_parse_gpus(matrix, spec, count, name, cc, memory_mib):
    gpus = parse_gpus(spec, matrix.gpus)
    assert [g.index for g in gpus] == list(range(count))
    assert {(g.name, g.compute_capability, g.memory_mib) for g in gpus} == {(name, cc, memory_mib)}
    assert all(g.bus_id == Unknown(reason="declared") for g in gpus)


def test_parse_mixed_groups(matrix):
    gpus = parse_gpus("2xH100, 1xL4", matrix.gpus)
    assert [(g.index, g.name) for g in gpus] == [(0, "H100"), (1, "H100"), (2, "L4")]


def test_cpu_means_no_gpus(matrix):
    assert parse_gpus("cpu", matrix.gpus) == ()
    assert parse_gpus(" CPU ", matrix.gpus) == ()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "--gpus is empty"),
        ("8H100", "cannot read '8H100'"),
        ("8x", "cannot read '8x'"),
        ("x", "unknown GPU model 'x'"),
        ("8xH100;", "cannot read"),
        ("2xH100,", "cannot read ''"),
        ("0xH100", "at least 1"),
        ("65xH100", "more than 64 GPUs"),
        ("99999999999xH100", "more than 64 GPUs"),
        ("\u0663xH100", "cannot read"),  # an Arabic-Indic 3: int() reads it, a count on the command line is ASCII
        ("32xH100,33xA100", "more than 64 GPUs"),
        ("8xH1000", "unknown GPU model 'H1000' (did you mean H100"),
        ("8xRTX4900", "did you mean RTX4090"),
        ("8xZZZ", "(known: H100,"),
    ],
)
def test_bad_gpu_specs_are_one_line_usage_errors(matrix, spec, message):
    with pytest.raises(UsageError) as info:
        parse_gpus(spec, matrix.gpus)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_declared_nvlink_board(matrix):
    facts = apply_declared(_facts(), Declared(gpus="8xH100"), matrix)
    hw = facts.hardware
    assert hw.source is HardwareSource.DECLARED
    assert len(hw.gpus) == 8
    assert len(hw.links) == 28
    assert {(link.interconnect, link.nvlinks) for link in hw.links} == {(Interconnect.NVLINK, 18)}
    assert all(link.a < link.b and link.p2p == Unknown(reason="declared") for link in hw.links)
    assert hw.driver == Unknown(reason="not declared; pass --driver")
    assert isinstance(hw.driver_cuda, Unknown)
    assert facts.declared == ("gpus",)


def test_declared_consumer_boards_have_no_p2p(matrix):
    links = apply_declared(_facts(), Declared(gpus="4xRTX4090"), matrix).hardware.links
    assert len(links) == 6
    assert {(link.interconnect, link.p2p) for link in links} == {(Interconnect.PCIE_HOST_BRIDGE, False)}


def test_declared_data_center_pcie_boards_leave_p2p_unknown(matrix):
    links = apply_declared(_facts(), Declared(gpus="2xL40S"), matrix).hardware.links
    assert [(link.interconnect, link.p2p) for link in links] == [(Interconnect.PCIE_HOST_BRIDGE, Unknown(reason="declared"))]


def test_nvl_bridges_link_pairs_only(matrix):
    links = apply_declared(_facts(), Declared(gpus="4xH100-NVL"), matrix).hardware.links
    nvlink = {(link.a, link.b) for link in links if link.interconnect is Interconnect.NVLINK}
    assert nvlink == {(0, 1), (2, 3)}
    assert len(links) == 6


def test_mixed_models_meet_over_pcie(matrix):
    links = apply_declared(_facts(), Declared(gpus="1xH100,1xRTX4090"), matrix).hardware.links
    assert [(link.interconnect, link.p2p) for link in links] == [(Interconnect.PCIE_HOST_BRIDGE, False)]


def test_one_gpu_has_no_links(matrix):
    assert apply_declared(_facts(), Declared(gpus="H100"), matrix).hardware.links == ()


def test_declared_driver_sets_the_driver_cuda(matrix):
    facts = apply_declared(_facts(), Declared(gpus="8xH100", driver="550.54.15"), matrix)
    assert (facts.hardware.driver, facts.hardware.driver_cuda) == ("550.54.15", "12.4")
    assert facts.declared == ("driver", "gpus")


def test_declared_driver_over_probed_gpus_keeps_the_gpus(matrix):
    facts = apply_declared(_facts(PROBED), Declared(driver="580.65.06"), matrix)
    assert facts.hardware.gpus == PROBED.gpus
    assert facts.hardware.source is HardwareSource.NVML
    assert (facts.hardware.driver, facts.hardware.driver_cuda) == ("580.65.06", "13.0")
    assert facts.declared == ("driver",)


def test_declared_gpus_keep_a_probed_driver(matrix):
    facts = apply_declared(_facts(PROBED), Declared(gpus="2xH100"), matrix)
    assert (facts.hardware.driver, facts.hardware.driver_cuda) == ("570.124.06", "12.8")
    assert [g.name for g in facts.hardware.gpus] == ["H100", "H100"]


def test_a_driver_older_than_the_matrix_has_an_unknown_cuda(matrix):
    hw = apply_declared(_facts(), Declared(driver="418.40.04"), matrix).hardware
    assert hw.driver == "418.40.04"
    assert isinstance(hw.driver_cuda, Unknown) and "older than every CUDA toolkit" in hw.driver_cuda.reason


def test_cpu_means_no_gpus_and_no_driver(matrix):
    facts = apply_declared(_facts(PROBED), Declared(gpus="cpu"), matrix)
    assert facts.hardware == Hardware(source=HardwareSource.DECLARED, driver=None, driver_cuda=None, gpus=(), links=())
    assert facts.declared == ("gpus",)


def test_declared_launcher(matrix):
    facts = apply_declared(_facts(declared=("gpus",)), Declared(launcher="Torchrun"), matrix)
    assert facts.launch.launcher == "torchrun"
    assert facts.launch.container == "docker"
    assert facts.declared == ("gpus", "launcher")


def test_all_three_are_sorted_and_unique(matrix):
    facts = apply_declared(
        _facts(declared=("launcher", "gpus")), Declared(gpus="2xA100", driver="535.104.05", launcher="accelerate"), matrix
    )
    assert facts.declared == ("driver", "gpus", "launcher")


def test_nothing_declared_returns_the_facts_unchanged(matrix):
    facts = _facts(PROBED)
    assert apply_declared(facts, Declared(), matrix) is facts


@pytest.mark.parametrize(
    "declared, message",
    [
        (Declared(driver="55O.54.15"), "--driver '55O.54.15' is not a driver version"),
        (Declared(driver="latest"), "is not a driver version"),
        (Declared(driver="550"), "is not a driver version"),
        (Declared(launcher="mpirun"), "--launcher 'mpirun' is not one of python, torchrun, accelerate, deepspeed"),
        (Declared(gpus="cpu", driver="550.54.15"), "--gpus cpu declares a machine without NVIDIA GPUs or driver"),
        (Declared(gpus="8xH1000"), "unknown GPU model"),
    ],
)
def test_bad_declarations_are_one_line_usage_errors(matrix, declared, message):
    with pytest.raises(UsageError) as info:
        apply_declared(_facts(), declared, matrix)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_declared_facts_drive_conditions(matrix):
    """A signature about multi-GPU NVLink boxes matches a declared 8xH100 without any probing."""
    facts = apply_declared(_facts(), Declared(gpus="8xH100", driver="550.54.15"), matrix)
    when = When(gpu_count=SpecifierSet(">=8"), nvlink=True, compute_capability=SpecifierSet(">=9.0"), driver=SpecifierSet("<580"))
    assert evaluate(when, facts).outcome is Outcome.MATCH
    pcie = apply_declared(_facts(), Declared(gpus="8xL40S"), matrix)
    assert evaluate(When(nvlink=True), pcie).outcome is Outcome.NO_MATCH
    # No driver declared: a driver condition cannot be decided, and says why.
    verdict = evaluate(When(driver=SpecifierSet("<580")), apply_declared(_facts(), Declared(gpus="H100"), matrix))
    assert verdict.outcome is Outcome.UNKNOWN and "pass --driver" in verdict.missing[0]


def test_declared_facts_survive_the_json_round_trip(matrix):
    from compat.model.facts import dump_facts, load_facts

    facts = apply_declared(_facts(), Declared(gpus="4xRTX4090", driver="570.124.06", launcher="accelerate"), matrix)
    assert load_facts(dump_facts(facts)) == facts
