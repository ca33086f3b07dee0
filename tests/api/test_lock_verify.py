"""`compat lock --verify`'s library half: a set that does not install is reported with uv's reason, never passed."""

from __future__ import annotations

import pytest

from compat import api
from compat.model.lock import Lock
from compat.model.smoke import SmokeReport, Stage, StageResult, Status, Verification
from compat.report.smoke import render_verification

_TRL_CPU = api.LockRequest(targets=("trl",), declared=api.Declared(gpus="cpu"), python_version="3.11",
                           platform="linux-x86_64")


def test_a_set_that_cannot_install_offline_is_not_passed_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # an empty cache: offline finds nothing
    result = api.lock_verify(api.VerifyRequest(lock=_TRL_CPU, offline=True))
    assert isinstance(result, Verification)
    assert not result.passed and result.smoke is None
    assert result.install_error is not None and "uv" in result.install_error
    text = render_verification(result)
    assert text.startswith("compat lock --verify: the lock is not written: the set did not install")


def test_a_find_links_that_names_no_folder_is_a_usage_error_before_anything_installs(tmp_path):
    # uv answered "no solution found" (exit 1, a verdict on the lock) for a mistyped folder
    from compat.errors import UsageError

    (tmp_path / "a-file").write_text("")
    for link, says in ((tmp_path / "nope", "does not exist"), (tmp_path / "a-file", "is not a directory")):
        with pytest.raises(UsageError, match=f"--find-links {link}: {says}"):
            api.lock_verify(api.VerifyRequest(lock=_TRL_CPU, find_links=(str(link),), offline=True))


@pytest.mark.parametrize(("train", "passed"), [(Status.PASS, True), (Status.FAIL, False)])
def test_verification_words_what_was_and_was_not_verified(train, passed):
    lock = api.lock(_TRL_CPU)
    assert isinstance(lock, Lock)
    report = SmokeReport(python="/venv/bin/python", budget_s=900.0, seconds=80.0, trainers=("sft",), stages=(
        StageResult(stage=Stage.IMPORT, status=Status.PASS, seconds=10.0),
        StageResult(stage=Stage.DEVICE, status=Status.SKIPPED, seconds=0.0, reason="no GPU visible"),
        StageResult(stage=Stage.TRAIN, status=train, seconds=40.0),
    ))
    v = Verification(lock=lock, install_error=None, smoke=report, install_s=30.0)
    assert v.passed is passed
    text = render_verification(v)
    assert "verified here: import" in text and "not verified here: device: no GPU visible" in text
    assert ("the lock is not written: train failed" in text) is not passed


@pytest.mark.slow
def test_a_cpu_lock_of_trl_and_peft_installs_from_local_wheels_and_passes_its_smoke():
    import os
    from pathlib import Path

    house = os.environ.get("COMPAT_VERIFY_WHEELHOUSE")
    if not house or not any(Path(house).glob("torch-2.13.0*.whl")):
        pytest.skip("COMPAT_VERIFY_WHEELHOUSE holds no wheelhouse of the locked set with torch 2.13.0 CPU "
                    "(.ci/run downloads it; the PyTorch index is not reachable from the test machines)")
    result = api.lock_verify(api.VerifyRequest(
        lock=api.LockRequest(targets=("trl", "peft", "torch==2.13.0"), declared=api.Declared(gpus="cpu"),
                             python_version="3.11", platform="linux-x86_64"),
        offline=True, find_links=(house,), trainers=("sft",),
    ))
    assert isinstance(result, Verification) and result.install_error is None, getattr(result, "install_error", result)
    assert result.passed and result.smoke is not None, render_verification(result)
    stages = {s.stage: s.status for s in result.smoke.stages}
    assert stages[Stage.IMPORT] is Status.PASS and stages[Stage.TRAIN] is Status.PASS
    assert stages[Stage.DEVICE] is Status.SKIPPED
    assert "not verified here: device" in render_verification(result)


def test_the_verify_venvs_children_write_bytecode_and_a_users_do_not(tmp_path, monkeypatch):
    # uv fills the venv without bytecode: under PYTHONDONTWRITEBYTECODE each of the smoke's children (import, the
    # collective's ranks, train, the launched ranks) would compile the whole stack again, about 10 s of CPU each.
    import compat.api.locking
    import compat.sources.smoke.install
    from compat.sources.smoke.install import Installed

    seen = []
    monkeypatch.setattr(compat.sources.smoke.install, "install_lock",
                        lambda request, root: Installed(python=tmp_path / "python", seconds=0.0))
    monkeypatch.setattr(compat.api.locking, "smoke", lambda request: seen.append(request))
    api.lock_verify(api.VerifyRequest(lock=_TRL_CPU, offline=True))
    assert seen[0].bytecode is True
    assert api.SmokeRequest().bytecode is False  # `compat smoke` leaves the judged environment as it found it
