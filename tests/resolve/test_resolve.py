"""compat.resolve over a small fixture matrix (real torch/CUDA tables): seeds, hardware corners, conflicts."""

from __future__ import annotations

import json

import pytest

from compat.errors import ResolutionError, UsageError
from compat.model.conflict import Alternative, ConflictKind
from compat.model.facts import Distribution
from compat.model.lock import ConstraintKind, PinReason, PinReasonKind
from compat.model.rejection import RejectionKind
from compat.report.lock import (
    LockFormat,
    hardware_lines,
    reason_texts,
    render_conflict,
    render_lock,
)
from compat.resolve import resolve
from tests.support.facts import make_facts


def lock(matrix, extensions, targets, **kw):
    options = {k: kw.pop(k) for k in ("prefer_installed", "minor_compat") if k in kw}
    return resolve(targets, make_facts(**kw), matrix, extensions=extensions, **options)


def versions(result) -> dict[str, str]:
    return {p.name: p.full_version for p in result.pins}


def test_newest_grpo_vllm_stack_on_h100_r580(matrix, extensions):
    got = lock(matrix, extensions, ["trl[vllm]"], gpus=8)
    assert versions(got) == {
        "accelerate": "1.10.1", "torch": "2.13.0", "transformers": "5.17.0", "trl": "1.16.0", "vllm": "0.31.0",
    }
    torch = got.pin("torch")
    assert torch.index_url is None and "vllm 0.31.0 pins torch==2.13.0" in reason_texts(torch)
    parent = PinReason(kind=PinReasonKind.PARENT, package="torch", specifier="==2.13.0", exact=True, parent="vllm", parent_version="0.31.0")
    assert parent in torch.reasons
    assert got.pin("trl").extras == ("vllm",)


def test_old_driver_keeps_torch_on_a_cuda_it_supports(matrix, extensions):
    got = lock(matrix, extensions, ["trl[vllm]"], gpus=8, driver="550.54.15")
    torch = got.pin("torch")
    # R550 fully supports CUDA <= 12.4: no CUDA 13 torch, and vLLM follows torch down.
    assert torch.local in (None, "cu118", "cu121", "cu124")
    assert got.pin("vllm").version in ("0.7.2", "0.8.5", "0.9.0")
    assert got.hardware.driver == "550.54.15" and got.hardware.max_cuda == "12.4"
    assert "driver 550.54.15 (CUDA <= 12.4)" in hardware_lines(got.hardware)


def test_seed_trl_0152_vllm_extra_gets_vllm_072(matrix, extensions):
    got = lock(matrix, extensions, ["trl[vllm]==0.15.2"], gpus=2, cc="8.0")
    assert versions(got)["vllm"] == "0.7.2"
    assert "vllm 0.7.2 pins torch==2.5.1" in reason_texts(got.pin("torch"))


def test_seed_grpo_device_mismatch_is_avoided_on_two_gpus(matrix, extensions):
    # trl 0.15 with vLLM 0.7.0 on two GPUs is the known failure: the lock moves vLLM to the fix.
    got = lock(matrix, extensions, ["trl==0.15.2", "vllm<=0.7.2"], gpus=2, cc="8.0")
    assert versions(got)["vllm"] == "0.7.2"
    assert [c.signature for c in got.constraints] == []  # newest first already avoids it
    forced = lock(matrix, extensions, ["trl==0.15.2", "vllm<0.7.1"], gpus=1, cc="8.0")
    assert versions(forced)["vllm"] == "0.7.0"  # one GPU: not exposed
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["trl==0.15.2", "vllm<0.7.1"], gpus=2, cc="8.0")
    imposed = [c.constraint for c in err.value.causes if c.kind is ConflictKind.IMPOSED]
    assert [(c.signature, c.kind, c.package) for c in imposed] == [("grpo-vllm-device-mismatch", ConstraintKind.EXCLUDE, "vllm")]


def test_catalog_constraint_is_recorded_when_it_changes_the_answer(matrix, extensions):
    # A bare vLLM beside trl==0.15.2 takes the release of TRL's window (tested_or_contemporary below); a floor
    # past that window leaves the newest first: vLLM 0.31 with TRL < 0.27 is a known import failure, and the
    # pinned TRL cannot move, so vLLM does.
    got = lock(matrix, extensions, ["trl==0.15.2", "vllm>=0.8"], gpus=2, cc="8.0")
    assert got.pin("vllm").version == "0.9.0"
    assert [c.signature for c in got.constraints] == ["trl-vllm-guideddecodingparams"]
    kept = [r for r in got.pin("vllm").reasons if r.kind is PinReasonKind.KEPT_OFF]
    assert [r.constraint.signature for r in kept] == ["trl-vllm-guideddecodingparams"]
    assert any(t.startswith("kept off trl-vllm-guideddecodingparams: ") for t in reason_texts(got.pin("vllm")))


def test_a_bare_target_beside_a_pinned_one_takes_the_release_of_its_window(matrix, extensions):
    got = lock(matrix, extensions, ["trl==0.15.2", "vllm"], gpus=2, cc="8.0")
    vllm = got.pin("vllm")
    assert vllm.version == "0.7.2" and got.constraints == ()
    assert any(r.kind is PinReasonKind.CONTEMPORARY and r.parent == "trl" for r in vllm.reasons)


def test_a_floor_pin_anchors_nothing(matrix, extensions):
    got = lock(matrix, extensions, ["trl>=0.14", "vllm"], gpus=2, cc="8.0")
    assert not any(r.kind in (PinReasonKind.CONTEMPORARY, PinReasonKind.TESTED) for r in got.pin("vllm").reasons)


def test_launcher_fact_turns_on_a_catalog_constraint(matrix, extensions):
    plain = lock(matrix, extensions, ["trl<=0.17"], gpus=2, launcher="python")
    assert plain.pin("trl").version == "0.17.0"
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["trl<0.17"], gpus=2, launcher="python")
    assert "online-dpo-dataparallel-config" in render_conflict(["trl<0.17"], err.value)
    fine = lock(matrix, extensions, ["trl<0.17"], gpus=2, launcher="accelerate")
    assert fine.pin("trl").version == "0.15.2"


def test_rtx5090_with_old_vllm_explains_the_chain(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["vllm==0.7.2"], cc="12.0")
    text = render_conflict(["vllm==0.7.2"], err.value)
    assert "vllm 0.7.2 pins torch==2.5.1" in text
    (cause,) = err.value.causes
    dead = cause.rejections[0]
    assert dead.kind is RejectionKind.DEAD_DEPENDENCY and dead.dependency == "torch" and dead.exact
    assert dead.because.kind is RejectionKind.NO_ARCH and dead.because.compute_capability == "12.0"
    assert cause.alternative is Alternative.ANOTHER_GPU
    assert "no torch 2.5.1 build has sm_120 (NVIDIA GeForce RTX 5090)" in text
    assert "use vllm >= 0.9.0 or another GPU" in text


def test_rtx5090_gets_a_blackwell_torch(matrix, extensions):
    got = lock(matrix, extensions, ["vllm==0.9.0"], cc="12.0")
    torch = got.pin("torch")
    assert torch.full_version == "2.7.0+cu128"  # 2.7's default (cu126) has no sm_120
    assert torch.index_url == "https://download.pytorch.org/whl/cu128"
    text = render_lock(got, LockFormat.REQUIREMENTS)
    assert "--extra-index-url https://download.pytorch.org/whl/cu128\n" in text
    assert "torch==2.7.0+cu128  # " in text


def test_v100_with_cuda13_torch_gets_the_cu126_build(matrix, extensions):
    got = lock(matrix, extensions, ["torch==2.13.0"], cc="7.0")
    assert got.pin("torch").full_version == "2.13.0+cu126"
    assert got.pin("torch").index_url.endswith("/cu126")


def test_r470_driver_has_no_cuda12_torch(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["torch"], cc="8.0", driver="470.82.01")
    (cause,) = err.value.causes
    assert {r.kind for r in cause.rejections} == {RejectionKind.NEEDS_DRIVER}
    assert "needs a newer driver than 470.82.01" in render_conflict(["torch"], err.value)
    relaxed = lock(matrix, extensions, ["torch"], cc="8.0", driver="470.82.01", minor_compat=True)
    assert relaxed.pin("torch").local is not None and relaxed.pin("torch").local.startswith("cu11")


def test_python_version_changes_the_answer(matrix, extensions):
    old = lock(matrix, extensions, ["trl[vllm]"], python="3.10")
    assert old.pin("trl").version == "0.17.0"  # TRL 1.15+ needs Python 3.11
    new = lock(matrix, extensions, ["trl[vllm]"], python="3.13")
    assert new.pin("trl").version == "1.16.0"
    assert new.python_version == "3.13"


def test_unsatisfiable_targets_name_both_sides(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["trl[vllm]==1.16.0", "vllm==0.9.0"])
    text = render_conflict(["trl[vllm]==1.16.0", "vllm==0.9.0"], err.value)
    assert "you ask for vllm==0.9.0" in text and "trl 1.16.0[vllm] requires vllm" in text


def test_yanked_release_only_when_pinned_exactly(matrix, extensions):
    assert lock(matrix, extensions, ["vllm"]).pin("vllm").version == "0.31.0"
    assert lock(matrix, extensions, ["vllm==0.31.1"]).pin("vllm").version == "0.31.1"


def test_flash_attn_follows_torch_and_installs_last(matrix, own_wheels):
    got = lock(matrix, own_wheels, ["flash-attn", "torch", "numpy>=2"])
    assert versions(got)["flash-attn"] == "2.8.3"  # 2.8.3.post2 wheels are not curated
    assert got.pin("torch").version == "2.8.0"  # newest torch with flash-attn 2.8.3 wheels
    assert got.pin("flash-attn").after_torch
    # the lock says which package held torch back, and what a newer torch needs
    from compat.model.lock import LockNoteKind

    (held,) = [n for n in got.notes if n.kind is LockNoteKind.HELD_BACK]
    assert held.package == "flash-attn" and "so torch stays at 2.8.0 although torch 2.15.0 fits" in (held.reason or "")
    assert "pin flash-attn==2.8.3 beside it" in render_lock(got, LockFormat.REQUIREMENTS)
    assert got.unpinned == ("numpy>=2",)
    text = render_lock(got, LockFormat.REQUIREMENTS)
    assert "pip install --no-build-isolation flash-attn==2.8.3" in text
    assert "\nflash-attn==" not in text  # pip must not build it in isolation
    assert "\nflash-attn==2.8.3" in render_lock(got, LockFormat.CONSTRAINTS)


def test_a_flash_attn_the_targets_pin_is_built_from_source_rather_than_rolling_torch_back(matrix, own_wheels):
    from compat.model.lock import LockNoteKind

    extensions = own_wheels
    got = lock(matrix, extensions, ["flash-attn==2.8.3", "torch==2.11.0"])
    assert versions(got)["flash-attn"] == "2.8.3" and got.pin("torch").version == "2.11.0"
    (note,) = [n for n in got.notes if n.kind is LockNoteKind.FROM_SOURCE]
    assert note.package == "flash-attn" and "no prebuilt wheel for torch 2.11.0" in (note.reason or "")
    text = render_lock(got, LockFormat.REQUIREMENTS)
    assert "pip builds it from source" in text and "pip install --no-build-isolation flash-attn==2.8.3" in text
    # a release with no known wheels at all is kept too, and says so
    got = lock(matrix, extensions, ["flash-attn==2.8.3.post2"])
    (note,) = [n for n in got.notes if n.kind is LockNoteKind.FROM_SOURCE]
    assert "no prebuilt wheel of flash-attn 2.8.3.post2 is known" in (note.reason or "")
    # where a prebuilt wheel fits, no note; and an exact pin is the user's choice, not a package holding torch back
    got = lock(matrix, extensions, ["flash-attn==2.8.3", "torch==2.8.0"])
    assert not [n for n in got.notes if n.kind in (LockNoteKind.FROM_SOURCE, LockNoteKind.HELD_BACK)]


def test_flash_attn_takes_another_publishers_wheel_rather_than_rolling_the_stack_back(matrix, extensions):
    from compat.model.lock import LockNoteKind

    # 2.8.3.post1 is newer, but the project's wheels stop at torch 2.8; 2.8.3 has another publisher's up to 2.13
    got = lock(matrix, extensions, ["flash-attn", "torch", "numpy>=2"])
    assert versions(got)["flash-attn"] == "2.8.3" and got.pin("torch").version == "2.13.0"
    pin = got.pin("flash-attn")
    assert pin.after_torch and pin.wheel == (
        "https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/v0.9.47/"
        "flash_attn-2.8.3%2Bcu130torch2.13-cp311-cp311-linux_x86_64.whl")
    (why,) = [r for r in pin.reasons if r.kind is PinReasonKind.PUBLISHER_WHEEL]
    assert why.variant == "cu130" and "mjun0812/flash-attention-prebuild-wheels" in (why.source or "")
    assert not [n for n in got.notes if n.kind is LockNoteKind.FROM_SOURCE]
    # the publisher stops at torch 2.13 too: the lock still says who holds torch back, and what is there
    (held,) = [n for n in got.notes if n.kind is LockNoteKind.HELD_BACK]
    assert "so torch stays at 2.13.0 although torch 2.15.0 fits" in (held.reason or "")
    assert "==2.13.* (another publisher, mjun0812/flash-attention-prebuild-wheels)" in (held.reason or "")
    text = render_lock(got, LockFormat.REQUIREMENTS)
    assert f"pip install --no-build-isolation {pin.wheel}" in text and "\nflash-attn" not in text
    # an exact pin with a publisher's wheel for the set is installed from it, not built
    got = lock(matrix, extensions, ["flash-attn==2.8.3", "torch==2.11.0"])
    assert "torch2.11-cp311" in (got.pin("flash-attn").wheel or "")
    assert not [n for n in got.notes if n.kind is LockNoteKind.FROM_SOURCE]


def test_flash_attn_refuses_pre_ampere(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["flash-attn"], cc="7.0")
    assert err.value.causes[0].rejections[0].kind is RejectionKind.EXTENSION_MIN_ARCH
    assert "compute capability >= 8.0" in render_conflict(["flash-attn"], err.value)


def test_prefer_installed(matrix, extensions):
    installed = (Distribution(name="trl", version="0.17.0", requires=()),)
    got = lock(matrix, extensions, ["trl"], packages=installed, prefer_installed=True)
    assert got.pin("trl").version == "0.17.0"
    assert lock(matrix, extensions, ["trl"], packages=installed).pin("trl").version == "1.16.0"


def test_output_is_deterministic_and_json_is_sorted(matrix, extensions):
    a = render_lock(lock(matrix, extensions, ["trl[vllm]"], gpus=8), LockFormat.REQUIREMENTS)
    b = render_lock(lock(matrix, extensions, ["trl[vllm]"], gpus=8), LockFormat.REQUIREMENTS)
    assert a == b
    doc = json.loads(render_lock(lock(matrix, extensions, ["trl[vllm]"], gpus=8), LockFormat.JSON))
    assert doc["schema_version"] == 2 and [p["name"] for p in doc["pins"]] == sorted(p["name"] for p in doc["pins"])


@pytest.mark.parametrize("bad", ["trl[vllm", "", "pkg @ https://example.invalid/x.whl"])
def test_bad_targets_are_usage_errors(matrix, extensions, bad):
    with pytest.raises(UsageError):
        lock(matrix, extensions, [bad] if bad else [])


def _rejections(err) -> list:
    return [r for c in err.value.causes for r in c.rejections]


@pytest.mark.parametrize(("targets", "kw", "kind"), [
    (["trl==1.16.0"], {"python": "3.10"}, RejectionKind.REQUIRES_PYTHON),
    (["vllm>0.31.0,<0.32"], {}, RejectionKind.YANKED),
    (["flash-attn>2.8.3.post1"], {}, RejectionKind.EXTENSION_NOT_CURATED),
    (["flash-attn"], {"cc": "7.0"}, RejectionKind.EXTENSION_MIN_ARCH),
    (["vllm==0.7.2"], {"cc": "12.0"}, RejectionKind.DEAD_DEPENDENCY),
])
def test_each_resolver_rejection_kind_is_recorded(matrix, extensions, targets, kw, kind):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, targets, **kw)
    assert kind in {r.kind for r in _rejections(err)}


def test_a_kernel_package_names_the_torch_build_it_cannot_use(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["vllm==0.31.0"], cc="7.0")
    (dead,) = _rejections(err)
    assert dead.kind is RejectionKind.DEAD_DEPENDENCY and dead.dependency == "torch"
    other = dead.because
    assert other.kind is RejectionKind.OTHER_CUDA_MAJOR and other.variant == "cu126"
    assert (other.asker.package, other.asker.version) == ("vllm", "0.31.0")
