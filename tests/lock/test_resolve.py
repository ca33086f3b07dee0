"""compat.resolve.resolver over a small fixture matrix (real torch/CUDA tables): seeds, hardware corners, conflicts."""

from __future__ import annotations

import json

import pytest

from compat.errors import ResolutionError, UsageError
from compat.model.facts import Distribution
from compat.report.lock import LockFormat, render_lock
from compat.resolve.resolver import resolve
from tests.lock.conftest import make_facts


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
    assert torch.index_url is None and "vllm 0.31.0 pins torch==2.13.0" in torch.reasons
    assert got.pin("trl").extras == ("vllm",)


def test_old_driver_keeps_torch_on_a_cuda_it_supports(matrix, extensions):
    got = lock(matrix, extensions, ["trl[vllm]"], gpus=8, driver="550.54.15")
    torch = got.pin("torch")
    # R550 fully supports CUDA <= 12.4: no CUDA 13 torch, and vLLM follows torch down.
    assert torch.local in (None, "cu118", "cu121", "cu124")
    assert got.pin("vllm").version in ("0.7.2", "0.8.5", "0.9.0")
    assert "driver 550.54.15 (CUDA <= 12.4)" in got.hardware


def test_seed_trl_0152_vllm_extra_gets_vllm_072(matrix, extensions):
    got = lock(matrix, extensions, ["trl[vllm]==0.15.2"], gpus=2, cc="8.0")
    assert versions(got)["vllm"] == "0.7.2"
    assert "vllm 0.7.2 pins torch==2.5.1" in got.pin("torch").reasons


def test_seed_grpo_device_mismatch_is_avoided_on_two_gpus(matrix, extensions):
    # trl 0.15 with vLLM 0.7.0 on two GPUs is the known failure: the lock moves vLLM to the fix.
    got = lock(matrix, extensions, ["trl==0.15.2", "vllm<=0.7.2"], gpus=2, cc="8.0")
    assert versions(got)["vllm"] == "0.7.2"
    assert [c.signature for c in got.constraints] == []  # newest first already avoids it
    forced = lock(matrix, extensions, ["trl==0.15.2", "vllm<0.7.1"], gpus=1, cc="8.0")
    assert versions(forced)["vllm"] == "0.7.0"  # one GPU: not exposed
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["trl==0.15.2", "vllm<0.7.1"], gpus=2, cc="8.0")
    assert "grpo-vllm-device-mismatch" in str(err.value)


def test_catalog_constraint_is_recorded_when_it_changes_the_answer(matrix, extensions):
    got = lock(matrix, extensions, ["trl==0.15.2", "vllm"], gpus=2, cc="8.0")
    # Newest vLLM (0.31) with TRL < 0.27 is a known import failure; the pinned TRL cannot move, so vLLM does.
    assert got.pin("vllm").version == "0.9.0"
    assert [c.signature for c in got.constraints] == ["trl-vllm-guideddecodingparams"]
    assert any("kept off trl-vllm-guideddecodingparams" in r for r in got.pin("vllm").reasons)


def test_launcher_fact_turns_on_a_catalog_constraint(matrix, extensions):
    plain = lock(matrix, extensions, ["trl<=0.17"], gpus=2, launcher="python")
    assert plain.pin("trl").version == "0.17.0"
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["trl<0.17"], gpus=2, launcher="python")
    assert "online-dpo-dataparallel-config" in str(err.value)
    fine = lock(matrix, extensions, ["trl<0.17"], gpus=2, launcher="accelerate")
    assert fine.pin("trl").version == "0.15.2"


def test_rtx5090_with_old_vllm_explains_the_chain(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["vllm==0.7.2"], cc="12.0")
    text = str(err.value)
    assert "vllm 0.7.2 pins torch==2.5.1" in text
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
    assert "needs driver >=" in str(err.value) or "newer driver" in str(err.value)
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
    text = str(err.value)
    assert "you ask for vllm==0.9.0" in text and "trl 1.16.0[vllm] requires vllm" in text


def test_yanked_release_only_when_pinned_exactly(matrix, extensions):
    assert lock(matrix, extensions, ["vllm"]).pin("vllm").version == "0.31.0"
    assert lock(matrix, extensions, ["vllm==0.31.1"]).pin("vllm").version == "0.31.1"


def test_flash_attn_follows_torch_and_installs_last(matrix, extensions):
    got = lock(matrix, extensions, ["flash-attn", "torch", "numpy>=2"])
    assert versions(got)["flash-attn"] == "2.8.3"  # 2.8.3.post2 wheels are not curated
    assert got.pin("torch").version == "2.8.0"  # newest torch with flash-attn 2.8.3 wheels
    assert got.pin("flash-attn").after_torch
    assert got.unpinned == ("numpy>=2",)
    text = render_lock(got, LockFormat.REQUIREMENTS)
    assert "pip install --no-build-isolation flash-attn==2.8.3" in text
    assert "\nflash-attn==" not in text  # pip must not build it in isolation
    assert "\nflash-attn==2.8.3" in render_lock(got, LockFormat.CONSTRAINTS)


def test_flash_attn_refuses_pre_ampere(matrix, extensions):
    with pytest.raises(ResolutionError) as err:
        lock(matrix, extensions, ["flash-attn"], cc="7.0")
    assert "compute capability >= 8.0" in str(err.value)


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
    assert doc["schema_version"] == 1 and [p["name"] for p in doc["pins"]] == sorted(p["name"] for p in doc["pins"])


@pytest.mark.parametrize("bad", ["trl[vllm", "", "pkg @ https://example.invalid/x.whl"])
def test_bad_targets_are_usage_errors(matrix, extensions, bad):
    with pytest.raises(UsageError):
        lock(matrix, extensions, [bad] if bad else [])
