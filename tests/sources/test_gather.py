"""compat.sources.gather: the one way a command gets its Facts (snapshot or probe, declared values, bounds)."""

import dataclasses
import json
from pathlib import Path

import pytest

from compat import api
from compat.errors import FactsError, UsageError
from compat.matrix import load_matrix
from compat.model.facts import HardwareSource, dump_facts, load_facts
from compat.model.unknown import Unknown
from compat.sources import Environment, gather
from compat.sources.declared import Declared
from compat.sources.settings import Settings

SNAPSHOT = Path(__file__).parent.parent / "data" / "envs" / "trl-vllm-300.facts.json"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def _no_probe(*args, **kwargs):
    raise AssertionError("gather probed the host")


def test_a_snapshot_is_read_and_the_declared_hardware_laid_over_it(matrix, monkeypatch):
    monkeypatch.setattr("compat.sources.probe.probe", _no_probe)
    facts = gather(Environment(facts_file=SNAPSHOT), Declared(gpus="2xA100-80GB", driver="570.124.06"), matrix,
                   settings=Settings())
    assert facts.hardware.source is HardwareSource.DECLARED
    assert [g.compute_capability for g in facts.hardware.gpus] == ["8.0", "8.0"]
    assert facts.hardware.driver == "570.124.06"
    assert {"gpus", "driver"} <= set(facts.declared)


def test_a_gpu_the_tool_gave_no_capability_takes_its_models(matrix, tmp_path):
    seen = load_facts(SNAPSHOT.read_text(), origin="snapshot")
    gpu = dataclasses.replace(seen.hardware.gpus[0], name="NVIDIA A100-SXM4-80GB",
                              compute_capability=Unknown(reason="nvidia-smi before R510"))
    path = tmp_path / "old-driver.json"
    path.write_text(dump_facts(dataclasses.replace(seen, hardware=dataclasses.replace(seen.hardware, gpus=(gpu,)))))
    facts = gather(Environment(facts_file=path), Declared(), matrix, settings=Settings())
    assert [g.compute_capability for g in facts.hardware.gpus] == ["8.0"]


def test_a_snapshot_with_a_version_compat_cannot_compare_is_an_error_naming_the_file(matrix, tmp_path):
    data = json.loads(SNAPSHOT.read_text())
    data["python"]["version"] = "3." + "1" * 5000
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data))
    with pytest.raises(FactsError, match=r"huge\.json: python"):
        gather(Environment(facts_file=path), Declared(), matrix, settings=Settings())


def test_facts_already_in_hand_are_neither_read_nor_probed(matrix, monkeypatch):
    monkeypatch.setattr("compat.sources.probe.probe", _no_probe)
    base = load_facts(SNAPSHOT.read_text(), origin="snapshot")
    facts = gather(Environment(), Declared(gpus="cpu"), matrix, settings=Settings(), base=base)
    assert facts.hardware.gpus == ()
    assert facts.python == base.python


def test_two_sources_of_one_environment_are_a_usage_error(matrix):
    with pytest.raises(UsageError, match="--facts and --python"):
        gather(Environment(facts_file=SNAPSHOT, python=Path("python3")), Declared(), matrix, settings=Settings())


def test_doctor_gathers_its_facts_once(monkeypatch):
    import compat.api.diagnosis as diagnosis

    calls = []

    def counting(*args, **kwargs):
        calls.append(args)
        return gather(*args, **kwargs)

    monkeypatch.setattr(diagnosis, "gather", counting)
    result = api.doctor(api.DoctorRequest(environment=api.Environment(facts_file=SNAPSHOT), declared=api.Declared(gpus="8xH100")))
    assert len(calls) == 1
    assert result.facts.declared == ("gpus",)


@pytest.mark.parametrize(("gpus", "none"), [(" CPU ", True), ("none", True), ("1xH100", False), (None, False)])
def test_one_spelling_of_a_machine_without_gpus(gpus, none):
    # lock's probe shortcut and the --gpus parser read "no GPUs" the same way.
    assert Declared(gpus=gpus).no_gpus() is none
