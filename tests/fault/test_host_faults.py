"""A host that hangs, crashes, lies or never stops talking gives an unknown with a reason, in time."""

from __future__ import annotations

import json
from pathlib import Path

import pynvml
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.errors import UsageError
from compat.model.facts import HardwareSource
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult, run
from compat.sources.probe.interpreter import fetch_interpreter, parse_interpreter
from compat.sources.probe.nvidia import (
    NVML_MARK,
    fetch_nvml,
    parse_nvml_report,
    parse_query_gpu,
    parse_topo,
    probe_hardware,
)
from tests.fault.fakes import Clock, fake_nvml, lying_python, one_line_error, tool
from tests.fault.inputs import json_values
from tests.support.main import compat_main

NO_PROC = Path("/nonexistent/proc/driver/nvidia/version")
DECLARED = ("--gpus", "1xH100", "--driver", "550.54.15")


# ------------------------------------------------------------------ NVML in its child process


@pytest.mark.parametrize("mode, reason", [
    ("hang", "timed out after 1 s"),
    ("segv", "was killed by SIGSEGV"),
    ("abort", "was killed by SIGABRT"),
    ("chatter", "printed more than"),
])
def test_nvml_that_hangs_crashes_or_lies_is_an_unknown_with_the_reason(tmp_path, monkeypatch, mode, reason):
    monkeypatch.setenv("PYTHONPATH", f"{fake_nvml(tmp_path / 'nvml')}:{Path(__file__).resolve().parents[2]}")
    monkeypatch.setenv("FAKE_NVML", mode)
    with Clock() as clock:
        hw, why = fetch_nvml(timeout=1)
    assert hw is None and reason in why, why
    assert clock.seconds < 5


def test_nvml_values_out_of_shape_are_unknowns_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", f"{fake_nvml(tmp_path / 'nvml')}:{Path(__file__).resolve().parents[2]}")
    monkeypatch.setenv("FAKE_NVML", "odd")
    hw, _ = fetch_nvml(timeout=5)
    assert hw is not None and hw.source is HardwareSource.NVML
    assert isinstance(hw.driver, Unknown) and "codec can't decode" in hw.driver.reason
    assert isinstance(hw.driver_cuda, Unknown) and "odd value 'twelve'" in hw.driver_cuda.reason
    # 2**40 GPUs: refused before a handle is asked for, not a billion calls.
    assert isinstance(hw.gpus, Unknown) and "odd value '1099511627776'" in hw.gpus.reason


def test_huge_nvml_numbers_are_bounded_before_judging(tmp_path, monkeypatch):
    from compat.sources.bounds import bound_facts
    from tests.fault.inputs import facts_with

    monkeypatch.setenv("PYTHONPATH", f"{fake_nvml(tmp_path / 'nvml')}:{Path(__file__).resolve().parents[2]}")
    monkeypatch.setenv("FAKE_NVML", "huge")
    hw, why = fetch_nvml(timeout=5)
    assert hw is not None, why
    bounded = bound_facts(facts_with(hardware=hw), origin="probe").hardware
    assert isinstance(bounded.driver, Unknown) and "cannot be read" in bounded.driver.reason
    (gpu,) = bounded.gpus
    assert isinstance(gpu.compute_capability, Unknown) and isinstance(gpu.memory_mib, Unknown)


def test_a_hanging_nvml_falls_back_to_nvidia_smi_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", f"{fake_nvml(tmp_path / 'nvml')}:{Path(__file__).resolve().parents[2]}")
    monkeypatch.setenv("FAKE_NVML", "segv")
    smi = tool(tmp_path / "bin", "nvidia-smi", "fail")
    with Clock() as clock:
        hw = probe_hardware(timeout=1, smi=str(smi), proc_version=NO_PROC)
    assert clock.seconds < 5
    assert hw.source is HardwareSource.NONE
    assert isinstance(hw.driver, Unknown)
    assert "SIGSEGV" in hw.driver.reason and "exited with status 9" in hw.driver.reason


# ------------------------------------------------------------------ nvidia-smi


@pytest.mark.parametrize("behaviour, reason", [
    ("hang", "timed out after 1 s"),
    ("crash", "killed by SIGSEGV"),
    ("endless", "printed more than"),
    ("garbage", "cannot read"),
])
def test_nvidia_smi_that_hangs_crashes_chatters_or_lies(tmp_path, behaviour, reason):
    smi = tool(tmp_path, "nvidia-smi", behaviour)
    with Clock() as clock:
        hw = probe_hardware(nvml=_NoNvml(), timeout=1, smi=str(smi), proc_version=NO_PROC)
    assert clock.seconds < 5
    assert isinstance(hw.gpus, Unknown) and reason in hw.gpus.reason, hw.gpus


class _NoNvml:
    """pynvml where the driver's library is missing: nvmlInit raises its NVMLError."""

    NVMLError = pynvml.NVMLError

    def nvmlInit(self) -> None:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)


def test_output_is_capped_and_the_child_killed():
    with Clock() as clock:
        result = run(["yes"], timeout=5, max_output=1024 * 1024)
    assert clock.seconds < 4
    assert result.problem == "yes printed more than 1 MiB and was stopped"
    assert len(result.stdout) == 1024 * 1024


def test_a_grandchild_holding_the_pipe_does_not_hang_the_probe(tmp_path):
    script = tool(tmp_path, "forks", "hang")
    script.write_text("#!/bin/sh\n(sleep 30 &)\necho done\n")
    with Clock() as clock:
        result = run([str(script)], timeout=1)
    assert clock.seconds < 5
    assert result.ok and "done" in result.stdout


# ------------------------------------------------------------------ the interpreter


@pytest.mark.parametrize("behaviour", ["hang", "crash", "endless"])
def test_an_interpreter_that_hangs_crashes_or_chatters_is_a_usage_error_in_time(tmp_path, behaviour):
    python = tool(tmp_path, "python", behaviour)
    with Clock() as clock, pytest.raises(UsageError, match="cannot inspect the interpreter"):
        fetch_interpreter(python, timeout=1)
    assert clock.seconds < 5


@pytest.mark.parametrize("report", [
    "[" * 100_000 + "]" * 100_000,  # nested past the JSON parser's recursion
    json.dumps({"markers": [], "version": 3, "distributions": {"a": 1}}),
    json.dumps({"markers": {}, "version": "3.11.9", "implementation": "cpython", "executable": None,
                "distributions": [{"name": None}]}),
    "9" * 10_000,
], ids=["deep", "wrong-types", "null-name", "huge-number"])
def test_a_lying_interpreter_is_a_one_line_error(tmp_path, report):
    python = lying_python(tmp_path, report)
    result = compat_main("doctor", "--python", str(python), *DECLARED)
    assert result.returncode == 2, result.stderr
    assert one_line_error(result).startswith("compat: error: cannot inspect the interpreter")


def test_an_interpreter_reporting_a_version_no_int_can_hold_is_a_one_line_error(tmp_path):
    report = {
        "platform": "Linux", "torch_stamp": None, "version": "3.11.9", "implementation": "cpython",
        "executable": "/x/python", "markers": {"python_version": "3.11"}, "glibc": "2.35", "is_linux": True,
        "distributions": [{"name": "trl", "version": "1" * 5000, "requires": [], "installer": "pip"}],
        "broken": [],
    }
    python = lying_python(tmp_path, json.dumps(report))
    result = compat_main("doctor", "--python", str(python), *DECLARED)
    assert result.returncode == 2, result.stderr
    assert "is not a version compat can compare" in one_line_error(result)


# ------------------------------------------------------------------ lying reports, generated


FAST = settings(max_examples=50, deadline=None)


@FAST
@given(report=st.dictionaries(st.sampled_from(["markers", "version", "implementation", "executable", "glibc",
                                               "distributions", "broken", "torch_stamp", "platform"]),
                              json_values, max_size=9))
def test_any_interpreter_report_is_facts_or_a_usage_error(report):
    result = RunResult(argv=("python",), returncode=0, stdout="COMPAT-INTERPRETER:" + json.dumps(report), stderr="")
    try:
        parse_interpreter(result, python=Path("python"))
    except UsageError:
        pass


@FAST
@given(report=json_values)
def test_any_nvml_report_is_hardware_or_a_reason(report):
    result = RunResult(argv=("python",), returncode=0, stdout=NVML_MARK + json.dumps(report), stderr="")
    hw, why = parse_nvml_report(result)
    assert hw is not None or why


@FAST
@given(text=st.text(alphabet=st.sampled_from(list("0123456789,. \n[]GPUNVindexnamecomput_capmemory.totalSYSPHB\x1b-")),
                    max_size=300))
def test_lying_nvidia_smi_output_is_a_value_error_at_worst(text):
    for parse in (parse_query_gpu, parse_topo):
        try:
            parse(text)
        except ValueError:
            pass


def test_without_nvmls_library_the_child_is_not_started_and_says_the_same(tmp_path, monkeypatch):
    from compat.sources.probe.nvidia import NVML_LIBRARY, NVML_LIBRARY_NOT_FOUND, nvml_library_absent

    cache = tmp_path / "ld.so.cache"
    cache.write_bytes(b"glibc-ld.so.cache1.1\0libc.so.6\0")
    lib = tmp_path / "lib"
    lib.mkdir()
    assert nvml_library_absent(cache=cache, search=(str(lib),), environ={})
    assert not nvml_library_absent(cache=cache, search=(str(lib),), environ={"PYTHONPATH": str(tmp_path)})
    assert not nvml_library_absent(cache=tmp_path / "missing", search=(str(lib),), environ={})
    (lib / NVML_LIBRARY).write_bytes(b"")
    assert not nvml_library_absent(cache=cache, search=(str(lib),), environ={})
    cache.write_bytes(b"glibc-ld.so.cache1.1\0" + NVML_LIBRARY.encode() + b"\0")
    assert not nvml_library_absent(cache=cache, search=(), environ={})
    # On a host without the library the real child gives the reason the shortcut gives.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    if not nvml_library_absent():
        pytest.skip("NVML's library is installed here")
    import sys

    assert fetch_nvml(timeout=10, python=sys.executable) == (None, NVML_LIBRARY_NOT_FOUND)
    assert fetch_nvml(timeout=10) == (None, NVML_LIBRARY_NOT_FOUND)
