"""An extra's ranges count when the extra is asked for by name or its feature is used; merely installed, at info."""

from __future__ import annotations

import dataclasses

import pytest

from compat.judge.checks.requirements import EXTRA, check_requirements
from compat.matrix import load_matrix
from compat.model.facts import AccelerateConfig, Launcher
from compat.model.findings import Severity, Status
from tests.support.facts import distributions, make_facts


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _facts(packages: dict[str, str], **changes):
    return dataclasses.replace(make_facts(packages=distributions(packages, requires=True)), **changes)


def _extra(facts, matrix):
    return [f for f in check_requirements(facts, matrix) if f.id == EXTRA and f.status is Status.FOUND]


# trl 0.15.2's [deepspeed] extra asks deepspeed>=0.14.4; deepspeed 0.14.0 is installed beside it
OLD_DEEPSPEED = {"trl": "0.15.2", "deepspeed": "0.14.0"}


def test_an_extra_whose_packages_are_only_installed_is_info(matrix):
    (f,) = _extra(_facts(OLD_DEEPSPEED), matrix)
    assert f.title == "trl 0.15.2 [deepspeed] requires deepspeed>=0.14.4, but deepspeed 0.14.0 is installed"
    assert f.severity is Severity.INFO


@pytest.mark.parametrize("how", ["requested", "launcher", "accelerate"])
def test_an_extra_asked_for_or_used_holds_its_range(matrix, how):
    facts = _facts(OLD_DEEPSPEED)
    if how == "requested":
        facts = dataclasses.replace(facts, requested=("trl[deepspeed]",))
        why = "trl[deepspeed] is asked for by name"
    elif how == "launcher":
        facts = dataclasses.replace(facts, launch=dataclasses.replace(facts.launch, launcher=Launcher.DEEPSPEED))
        why = "training is launched with deepspeed"
    else:
        config = AccelerateConfig(path="ds.yaml", distributed_type="DEEPSPEED", num_processes=8, mixed_precision="bf16",
                                  fsdp_version=None, zero_stage=3)
        facts = dataclasses.replace(facts, launch=dataclasses.replace(facts.launch, accelerate=config))
        why = "ds.yaml sets distributed_type: DEEPSPEED"
    (f,) = _extra(facts, matrix)
    assert f.severity is Severity.ERROR and why in [e.text for e in f.evidence]


def test_an_extra_named_for_another_project_or_another_extra_changes_nothing(matrix):
    facts = dataclasses.replace(_facts(OLD_DEEPSPEED), requested=("trl[vllm]", "accelerate[deepspeed]"))
    assert [f.severity for f in _extra(facts, matrix)] == [Severity.INFO]


def test_an_asked_for_extra_is_judged_even_when_something_else_requires_its_package(matrix):
    # deepspeed 0.16.3's [triton] extra pins triton==2.1.0; torch 2.5.1 installs triton 3.1.0 for itself
    packages = {"torch": "2.5.1", "triton": "3.1.0", "deepspeed": "0.16.3"}
    assert _extra(_facts(packages), matrix) == []  # triton is torch's: says nothing about deepspeed[triton]
    (f,) = _extra(_facts(packages, requested=("deepspeed[triton]",)), matrix)
    assert f.title == "deepspeed 0.16.3 [triton] requires triton==2.1.0, but triton 3.1.0 is installed"
    assert f.severity is Severity.ERROR
