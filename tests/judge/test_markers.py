"""Markers are judged with the facts' own marker environment, never filled from the machine running compat."""

from __future__ import annotations

import dataclasses

import pytest
from packaging.markers import Marker

from compat import api
from compat.judge.conditions import Outcome, evaluate, marker_holds, marker_variables
from compat.matrix.when import When
from compat.model.facts import Distribution
from compat.model.findings import Status
from compat.model.unknown import Unknown
from tests.api.test_api import DECLARED, refuse_probe, saved_facts, write_facts
from tests.support.facts import LINUX

# What a facts file written by an older or hand-made tool may hold: the Python version only.
PYTHON_ONLY = {"python_version": "3.11", "python_full_version": "3.11.9"}
LINUX_ONLY = 'nvidia-nccl-cu12==2.21.5; platform_system == "Linux" and platform_machine == "x86_64"'


def test_marker_variables_ignore_quoted_values_and_read_legacy_names():
    assert marker_variables(Marker('sys_platform == "linux" or os.name == "python_version"')) == {"sys_platform", "os_name"}
    assert marker_variables(Marker('extra == "vllm"')) == frozenset()


def test_a_marker_on_a_key_the_facts_lack_is_unknown_not_this_hosts_value():
    held = marker_holds(Marker('sys_platform == "linux"'), PYTHON_ONLY)
    assert isinstance(held, Unknown) and "sys_platform" in held.reason
    # Either answer from this host would be a guess: the same marker negated is unknown too.
    assert isinstance(marker_holds(Marker('sys_platform != "linux"'), PYTHON_ONLY), Unknown)
    assert marker_holds(Marker('python_version >= "3.10"'), PYTHON_ONLY) is True
    assert marker_holds(Marker('sys_platform == "darwin"'), LINUX) is False
    assert marker_holds(Marker('extra == "vllm"'), {}, extra="vllm") is True


def test_a_when_python_marker_needing_a_missing_key_is_unknown():
    facts = saved_facts({}, markers=PYTHON_ONLY)
    verdict = evaluate(When(python=Marker('sys_platform == "linux"')), facts)
    assert verdict.outcome is Outcome.UNKNOWN and "sys_platform" in verdict.missing[0]
    assert evaluate(When(python=Marker('sys_platform == "linux"')), saved_facts({}, markers=LINUX)).matched


def _with_linux_only_requirement(markers):
    facts = saved_facts({"torch": "2.5.1+cu124"}, markers=markers, torch="2.5.1+cu124")
    torch = Distribution(name="torch", version="2.5.1+cu124", requires=(LINUX_ONLY,))
    return dataclasses.replace(facts, packages=(torch,))


@pytest.fixture()
def facts_file(tmp_path, monkeypatch):
    refuse_probe(monkeypatch)
    return lambda facts: write_facts(tmp_path, facts)


def _unsatisfied(result):
    return [f for f in result.findings if f.id in ("unsatisfied-requirement", "missing-requirement")]


def test_doctor_reports_a_platform_marker_it_cannot_decide(facts_file):
    undecided = api.doctor(api.DoctorRequest(environment=facts_file(_with_linux_only_requirement(PYTHON_ONLY)), declared=DECLARED))
    (finding,) = _unsatisfied(undecided)
    assert finding.status is Status.CANNOT_CHECK
    assert "nvidia-nccl-cu12" in finding.unknown[0] and "platform_machine, platform_system" in finding.unknown[0]


def test_doctor_decides_when_the_facts_carry_the_keys(facts_file):
    linux = api.doctor(api.DoctorRequest(environment=facts_file(_with_linux_only_requirement(LINUX)), declared=DECLARED))
    (finding,) = _unsatisfied(linux)
    assert finding.status is Status.FOUND and "nvidia-nccl-cu12" in finding.title
    mac = {**LINUX, "platform_system": "Darwin", "sys_platform": "darwin", "platform_machine": "arm64"}
    on_mac = api.doctor(api.DoctorRequest(environment=facts_file(_with_linux_only_requirement(mac)), declared=DECLARED))
    assert _unsatisfied(on_mac) == []
