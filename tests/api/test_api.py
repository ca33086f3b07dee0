"""The library API: each command through compat.api with a facts file and declared hardware, no probe."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from compat import api
from compat.errors import UsageError
from compat.model.facts import (
    Facts,
    HardwareSource,
    Launcher,
    dump_facts,
)
from compat.model.findings import Severity, Status
from compat.model.lock import Lock, Plan
from compat.sources.settings import Settings
from tests.support.facts import LINUX, distributions, facts, interpreter
from tests.support.paths import LOGS

DECLARED = api.Declared(gpus="8xH100", driver="550.54.15")


def saved_facts(packages: dict[str, str], *, markers: dict[str, str] = LINUX, torch: str | None = None) -> Facts:
    """A snapshot as `compat facts` writes it on a machine without GPUs (the hardware is declared later)."""
    return facts(python=interpreter(executable="/usr/bin/python3", markers=markers),
                 packages=distributions(packages, requires=True), torch=torch)


def write_facts(directory: Path, facts: Facts) -> api.Environment:
    path = directory / "facts.json"
    path.write_text(dump_facts(facts), encoding="utf-8")
    return api.Environment(facts_file=path)


def refuse_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any live probe fails the test: a facts file or fully declared hardware must be enough."""
    import compat.sources.probe as probe_module

    def refuse(*_a: object, **_k: object) -> Facts:
        raise AssertionError("probed the host")

    monkeypatch.setattr(probe_module, "probe", refuse)


@pytest.fixture()
def facts_file(tmp_path):
    return lambda facts: write_facts(tmp_path, facts)


@pytest.fixture()
def no_probe(monkeypatch):
    refuse_probe(monkeypatch)


GOOD = {"torch": "2.5.1+cu124", "vllm": "0.7.2", "transformers": "4.51.3", "trl": "0.15.2"}


def test_facts_reads_the_file_and_lays_the_declared_hardware_over_it(facts_file, no_probe):
    env = api.facts(api.FactsRequest(environment=facts_file(saved_facts(GOOD, torch="2.5.1+cu124")), declared=DECLARED))
    assert env.hardware.source is HardwareSource.DECLARED
    assert env.hardware.driver == "550.54.15" and len(env.hardware.gpus) == 8
    assert env.declared == ("driver", "gpus")
    assert env.launch.launcher is Launcher.TORCHRUN
    assert env.package("vllm").version == "0.7.2"


def test_facts_file_and_python_together_is_a_usage_error(facts_file):
    env = dataclasses.replace(facts_file(saved_facts(GOOD)), python=Path("/usr/bin/python3"))
    with pytest.raises(UsageError, match="give one"):
        api.facts(api.FactsRequest(environment=env))


def test_a_missing_facts_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        api.facts(api.FactsRequest(environment=api.Environment(facts_file=tmp_path / "absent.json")))


def test_doctor_judges_the_file_with_the_declared_hardware(facts_file, no_probe):
    # vllm 0.7.2 pins torch==2.5.1: satisfied with torch 2.5.1, unmet with 2.6.0.
    good = api.doctor(api.DoctorRequest(environment=facts_file(saved_facts(GOOD, torch="2.5.1+cu124")), declared=DECLARED))
    assert not [f for f in good.findings if f.id == "torch-pin-broken-extension"]
    bad = api.doctor(api.DoctorRequest(
        environment=facts_file(saved_facts({**GOOD, "torch": "2.6.0+cu124"}, torch="2.6.0+cu124")), declared=DECLARED,
    ))
    unmet = [f for f in bad.findings if f.id == "torch-pin-broken-extension" and f.status is Status.FOUND]
    assert unmet and "Compiled against torch 2.5.1" in unmet[0].title and "vllm 0.7.2" in unmet[0].title
    assert bad.failed
    lenient = api.doctor(api.DoctorRequest(
        environment=facts_file(saved_facts({**GOOD, "torch": "2.6.0+cu124"}, torch="2.6.0+cu124")), declared=DECLARED,
        fail_on=Severity.ERROR, strict=False,
    ))
    assert lenient.failed == any(f.severity is Severity.ERROR and f.status is Status.FOUND for f in lenient.findings)


def test_explain_ranks_for_the_facts_file(facts_file, no_probe):
    log = (LOGS / "cuda-driver-too-old.log").read_bytes()
    result = api.explain(api.ExplainRequest(environment=facts_file(saved_facts(GOOD)), declared=DECLARED), [log])
    assert result.known
    assert result.environment.startswith("ranked for facts from ")


def test_explain_without_an_environment_and_from_a_log_file(no_probe):
    blocks = api.read_log(str(LOGS / "cuda-driver-too-old.log"))
    result = api.explain(api.ExplainRequest(use_environment=False), blocks)
    assert result.known and result.environment == "environment not used (--no-env)"
    assert all(m.verdict is None for m in result.matches)


def test_read_log_names_a_bad_file(tmp_path):
    with pytest.raises(UsageError, match="is a directory"):
        list(api.read_log(str(tmp_path)))
    with pytest.raises(UsageError, match="cannot read"):
        list(api.read_log(str(tmp_path / "absent.log")))


def test_read_log_reads_gzip(tmp_path):
    import gzip

    path = tmp_path / "run.log.gz"
    path.write_bytes(gzip.compress(b"line one\nline two\n"))
    assert b"".join(api.read_log(str(path))) == b"line one\nline two\n"


def test_lock_with_everything_declared_never_probes(no_probe):
    result = api.lock(api.LockRequest(targets=("vllm==0.7.2",), declared=DECLARED, python_version="3.11"))
    assert isinstance(result, Lock)
    pins = {p.name: p.version for p in result.pins}
    assert pins["vllm"] == "0.7.2" and pins["torch"] == "2.5.1"


def test_lock_from_a_facts_file_and_a_conflict_is_a_value(facts_file, no_probe):
    env = facts_file(saved_facts(GOOD, torch="2.5.1+cu124"))
    locked = api.lock(api.LockRequest(targets=("vllm==0.7.2",), environment=env, declared=DECLARED))
    assert isinstance(locked, Lock) and locked.python_version.startswith("3.11")
    conflict = api.lock(api.LockRequest(targets=("vllm==0.7.2", "torch==2.6.0"), environment=env, declared=DECLARED))
    assert isinstance(conflict, api.Conflict)
    assert conflict.targets == ("vllm==0.7.2", "torch==2.6.0") and conflict.error.causes


def test_plan_meets_the_unmet_requirements_without_making_them_targets(facts_file, no_probe):
    env = facts_file(saved_facts({"torch": "2.5.1+cu124"}, torch="2.5.1+cu124"))
    result = api.plan(api.PlanRequest(targets=("vllm==0.7.2",), environment=env, declared=DECLARED, installer=api.Installer.UV))
    assert isinstance(result, Plan), result
    assert result.steps and all(step.command[:2] == ("uv", "pip") for step in result.steps)
    # torch 2.5.1's unmet triton==3.1.0 is met by the lock itself: a declared requirement is no extra target.
    assert result.lock.targets == ("vllm==0.7.2",)
    assert any("triton==3.1.0" in step.packages for step in result.steps)
    assert any("vllm==0.7.2" in step.command for step in result.steps)


def test_plan_with_nothing_tracked_installed_is_a_usage_error(facts_file, no_probe):
    with pytest.raises(UsageError, match="no tracked package"):
        api.plan(api.PlanRequest(environment=facts_file(saved_facts({})), declared=DECLARED))


def test_matrix_show_uses_only_the_cache_it_is_given(tmp_path):
    found = api.matrix_show(api.ShowRequest(package="vllm", settings=Settings(cache_dir=tmp_path / "c")))
    assert found.package == "vllm" and found.find("0.7.2") is not None
    assert list((tmp_path / "c" / "parsed").glob("*.json"))
    with pytest.raises(UsageError, match="not a version"):
        api.matrix_show(api.ShowRequest(package="vllm", since="soon"))
    with pytest.raises(UsageError, match="no releases recorded"):
        api.matrix_show(api.ShowRequest(package="numpy"))


def test_matrix_validate(tmp_path):
    assert api.matrix_validate(api.ValidateRequest(audit=False)).ok
    with pytest.raises(UsageError, match="--alone needs"):
        api.matrix_validate(api.ValidateRequest(alone=True))


def test_matrix_refresh_without_an_index_asks_for_one(tmp_path):
    request = api.RefreshRequest(packages=("trl",), out=tmp_path, settings=Settings())
    with pytest.raises(UsageError, match="--index-url"):
        api.matrix_refresh(request)
    assert list(tmp_path.iterdir()) == []
