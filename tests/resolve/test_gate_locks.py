"""The locks issue 21 names as its gates, over the shipped matrix: a torch 2.10 cu129 build, and a 2026 vLLM +
flash-attn + DeepSpeed stack on 8xH100 with an R570 driver (CUDA <= 12.8), where flash-attn's own wheels stop at
torch 2.8 and another publisher's carry it; and the lock wrongs it names (a companion that holds the stack back, a
transformers paired with a PEFT it cannot load adapters with)."""

from __future__ import annotations

from functools import cache

import pytest
from packaging.version import Version

from compat.errors import ResolutionError
from compat.matrix import load_matrix
from compat.model.lock import LockNoteKind, PinReasonKind
from compat.report.lock import LockFormat, render_conflict, render_lock
from compat.resolve import resolve
from tests.support.facts import make_facts

R570 = "570.86.15"
R580 = "580.95.05"


@cache
def _matrix():
    return load_matrix()


def _lock(targets, driver, python="3.12"):
    return resolve(targets, make_facts(gpus=8, cc="9.0", driver=driver, python=python), _matrix())


def test_torch_2_10_cu129_locks_with_vllm_on_a_driver_that_runs_it():
    got = _lock(["torch==2.10.0+cu129", "vllm"], R580)
    assert got.pin("torch").full_version == "2.10.0+cu129"
    assert got.pin("vllm").version == "0.17.1"  # the newest vLLM that pins torch 2.10.0; its default wheel is CUDA 12.9


def test_torch_2_10_cu129_with_flash_attn_says_which_wheel_is_missing():
    with pytest.raises(ResolutionError) as err:
        _lock(["torch==2.10.0+cu129", "flash-attn"], R580)
    text = render_conflict(["torch==2.10.0+cu129", "flash-attn"], err.value)
    assert ("flash-attn 2.8.3 has no prebuilt wheel for torch's cu129 build (its wheels for that torch: CUDA 12.6, 12.8, "
            "13.0)") in text


def test_a_2026_vllm_flash_attn_deepspeed_stack_locks_on_8xh100_r570():
    got = _lock(["vllm", "flash-attn", "deepspeed"], R570)
    # R570 runs CUDA <= 12.8, so no CUDA 13 build: vLLM 0.31.0's +cu129 release asset (the newest vLLM with a CUDA 12
    # build known: 0.32.0's is not established, 0.33.0 has none) beside torch 2.13.0's cu126 build; flashinfer-python's
    # wheels are pure Python and pair with it
    vllm = got.pin("vllm")
    assert vllm.version == "0.31.0" and vllm.wheel == (
        "https://github.com/vllm-project/vllm/releases/download/v0.31.0/vllm-0.31.0+cu129-cp38-abi3-manylinux_2_28_x86_64.whl")
    assert got.pin("torch").full_version == "2.13.0+cu126"
    flash = got.pin("flash-attn")
    assert flash.version == "2.8.3" and flash.after_torch
    assert flash.wheel == ("https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/v0.9.47/"
                           "flash_attn-2.8.3%2Bcu126torch2.13-cp312-cp312-linux_x86_64.whl")
    assert [r.kind for r in flash.reasons if r.kind is PinReasonKind.PUBLISHER_WHEEL]
    # flash-attn's wheels stop at torch 2.13, but so does every vLLM with a CUDA 12 build: no package is blamed
    assert not [n for n in got.notes if n.kind in (LockNoteKind.HELD_BACK, LockNoteKind.FROM_SOURCE)]
    assert f"pip install --no-build-isolation {flash.wheel}" in render_lock(got, LockFormat.REQUIREMENTS)


def test_trl_vllm_with_flash_attn_is_not_rolled_back_a_year():
    got = _lock(["trl[vllm]", "flash-attn"], R580)
    assert got.pin("torch").version == "2.13.0" and got.pin("vllm").version == "0.31.0"
    assert got.pin("flash-attn").wheel is not None
    assert not [n for n in got.notes if n.kind is LockNoteKind.HELD_BACK]  # trl 1.16 caps vLLM, not flash-attn


def test_flashinfer_cubin_holds_flashinfer_python_to_its_version():
    got = _lock(["vllm", "flashinfer-cubin"], R580)
    cubin, python = got.pin("flashinfer-cubin").version, got.pin("flashinfer-python").version
    assert cubin == python == "0.6.13"  # the newest cubin on the index; vLLM 0.25.1 is the newest pinning it
    assert got.pin("vllm").version == "0.25.1"
    # the lock says which target held the stack back, and what the others take without it (vLLM, which only pins
    # torch, is not blamed)
    (held,) = [n for n in got.notes if n.kind is LockNoteKind.HELD_BACK]
    assert held.package == "flashinfer-cubin"
    assert held.reason == ("flashinfer-cubin 0.6.13 holds the set back: with it vllm 0.25.1 and torch 2.11.0, without it "
                           "vllm 0.33.0 and torch 2.14.0; for the newer stack drop flashinfer-cubin or wait for a release of "
                           "it that fits one")
    with pytest.raises(ResolutionError) as err:
        _lock(["vllm==0.27.0", "flashinfer-cubin"], R580)
    assert "flashinfer-cubin 0.6.13 pins flashinfer-python==0.6.13" in render_conflict(["vllm==0.27.0", "flashinfer-cubin"], err.value)


def test_a_lock_does_not_pair_transformers_5_6_with_a_peft_that_cannot_load_its_adapters():
    # transformers >= 5.6 imports a PEFT 0.19 function in load_adapter (huggingface/transformers#45155, #46605)
    got = _lock(["peft<0.19", "transformers", "trl"], R580)
    assert got.pin("peft").version == "0.18.1" and Version(got.pin("transformers").version) < Version("5.6.0")
    assert any(c.signature == "transformers-load-adapter-needs-peft-019" for c in got.constraints)
    # with both ranges forcing the pair there is no way out: the set is kept and the lock says the risk remains
    got = _lock(["peft<0.19", "transformers>=5.6"], R580)
    assert [n.signature for n in got.notes if n.kind is LockNoteKind.STILL_MATCHES] == ["transformers-load-adapter-needs-peft-019"]
    # a bare peft beside a new transformers takes a PEFT that loads its adapters
    assert Version(_lock(["peft", "transformers==5.10.2"], R580).pin("peft").version) >= Version("0.19.0")


def test_the_lock_judges_every_pair_of_the_set_as_doctor_does():
    # The provider checks a link between a requirement and its asker; the set as a whole is judged like doctor's
    # installed set, so a package that imports one it does not declare is held to it too.
    from compat.resolve.links import links_for

    links = links_for(None)
    broken = links.set_breaks({"trl": "0.7.10", "transformers": "4.39.0"})
    assert broken is not None and broken.key == "transformers:top_k_top_p_filtering"
    assert links.set_breaks({"liger-kernel": "0.8.5", "trl": "1.16.0"}) is None  # feature-only: LigerORPOTrainer
    assert links.set_breaks({"liger-kernel": "0.5.8", "transformers": "4.53.3"}) is None  # NeMo-RL ran it: Liger's patches


def test_a_start_up_link_between_undeclared_packages_is_kept_off(monkeypatch):
    # liger-kernel does not declare trl. Were its trl import a start-up one, the lock must not pair the two: a stand-in
    # index that calls liger-kernel 0.8.5 with any trl >= 0.29 broken moves the lock off liger-kernel 0.8.5.
    from compat.resolve.links import Links
    from compat.timeline.links import ApiSource, broken_links
    from compat.timeline.records import ImportKind

    real = Links.set_breaks

    def stand_in(self, pins):
        if pins.get("liger-kernel") == "0.8.5" and Version(pins.get("trl", "0")) >= Version("0.29"):
            (link,) = [x for x in broken_links(ApiSource(), "liger-kernel", "0.8.5", "trl", pins["trl"],
                                               frozenset({ImportKind.TOP_LEVEL})) if x.key == "trl.trainer:ORPOTrainer"]
            return link
        return real(self, pins)

    monkeypatch.setattr(Links, "set_breaks", stand_in)
    got = resolve(["trl[vllm]>=0.14", "deepspeed", "peft", "liger-kernel"],
                  make_facts(gpus=8, cc="9.0", driver=R580, python="3.12"), load_matrix())
    liger, trl = got.pin("liger-kernel").version, got.pin("trl").version
    assert not (liger == "0.8.5" and Version(trl) >= Version("0.29")), (liger, trl)
    # with both pinned exactly there is no way around it: no set, and the conflict names the link
    with pytest.raises(ResolutionError) as err:
        resolve(["trl==1.16.0", "liger-kernel==0.8.5"], make_facts(gpus=8, cc="9.0", driver=R580, python="3.12"), load_matrix())
    assert "ORPOTrainer" in render_conflict(["trl==1.16.0", "liger-kernel==0.8.5"], err.value)
