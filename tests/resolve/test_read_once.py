"""A lock reads what it was asked once: its targets, its hardware, and of a probed interpreter only what a lock needs."""

from __future__ import annotations

import sys
from pathlib import Path

import compat.resolve as resolve_pkg
import compat.resolve.hardware as hardware_mod
import compat.resolve.target as target_mod
from compat import api
from compat.model.lock import Lock


def _counting(monkeypatch, module, name, calls):
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def test_a_lock_parses_its_targets_and_derives_its_hardware_once(monkeypatch):
    calls: list[str] = []
    _counting(monkeypatch, target_mod, "parse_targets", calls)
    for module in (resolve_pkg, hardware_mod):  # resolve's own name for it and the one lock_hardware calls
        _counting(monkeypatch, module, "target_hardware", calls)
    locked = api.lock(api.LockRequest(targets=("trl", "peft"), declared=api.Declared(gpus="1xH100", driver="550.54.15"),
                                      python_version="3.11"))
    assert isinstance(locked, Lock)
    assert locked.targets == ("trl", "peft")  # the strings as asked, recorded from the one parse
    assert calls.count("parse_targets") == 1
    assert calls.count("target_hardware") == 1


def test_a_plan_derives_the_hardware_once_for_all_its_attempts(monkeypatch):
    from tests.support.facts import make_facts

    calls: list[str] = []
    _counting(monkeypatch, resolve_pkg, "target_hardware", calls)
    from compat.matrix import load_matrix

    resolve_pkg.resolve_from_installed(["trl"], ["peft"], make_facts(gpus=1), load_matrix(), latest=False)
    assert calls.count("target_hardware") == 1


def test_a_plan_reads_each_target_and_fix_once_whatever_the_attempts(monkeypatch):
    texts: list[str] = []
    real = target_mod.parse_targets

    def recorded(targets):
        texts.extend(targets)
        return real(targets)

    monkeypatch.setattr(target_mod, "parse_targets", recorded)
    snapshot = Path(__file__).parent.parent / "data" / "envs" / "trl-vllm-300.facts.json"
    api.plan(api.PlanRequest(environment=api.Environment(facts_file=snapshot)))
    assert texts, "the plan read no target"
    assert len(texts) == len(set(texts))


def test_a_lock_without_a_python_version_learns_it_without_importing_torch(monkeypatch):
    def no_import(*args, **kwargs):
        raise AssertionError("lock imported torch to learn the Python version")

    monkeypatch.setattr("compat.sources.probe.torch.fetch_torch_import", no_import)
    locked = api.lock(api.LockRequest(targets=("trl",), declared=api.Declared(gpus="cpu"),
                                      environment=api.Environment(python=Path(sys.executable))))
    assert isinstance(locked, Lock)
    assert locked.python_version == f"{sys.version_info.major}.{sys.version_info.minor}"
