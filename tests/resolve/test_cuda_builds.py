"""Other CUDA builds (matrix/builds.toml): vLLM's and xformers' +cu118 builds for a CUDA 11 driver,
by the URL or tag that installs them, in the lock, the plan and the --full request."""

from __future__ import annotations

import pytest

from compat.matrix import load_matrix
from compat.model.facts import Distribution
from compat.model.lock import PinReasonKind, StepKind
from compat.report.lock import LockFormat, render_lock
from compat.resolve import resolve
from compat.resolve.plan import plan
from tests.support.facts import make_facts

R520 = "520.61.05"  # CUDA <= 11.8: no CUDA 12 build of torch runs


@pytest.fixture(scope="module")
def shipped():
    """The shipped matrix: the builds are facts about real releases."""
    return load_matrix()


def test_a_cuda_11_driver_gets_the_cu118_builds_by_url(shipped):
    lock = resolve(["vllm==0.7.3"], make_facts(cc="7.0", driver=R520, python="3.10"), shipped)
    torch, vllm, xformers = lock.pin("torch"), lock.pin("vllm"), lock.pin("xformers")
    assert torch is not None and torch.full_version == "2.5.1+cu118"
    assert vllm is not None and vllm.full_version == "0.7.3+cu118" and vllm.index_url is None
    assert vllm.wheel == "https://github.com/vllm-project/vllm/releases/download/v0.7.3/vllm-0.7.3+cu118-cp38-abi3-manylinux1_x86_64.whl"
    # xformers' cu118 builds from 0.0.28 carry no tag: only the URL tells them from the CUDA 12 one.
    assert xformers is not None and xformers.local is None
    assert xformers.wheel == "https://download.pytorch.org/whl/cu118/xformers-0.0.28.post3-cp310-cp310-manylinux_2_28_x86_64.whl"
    assert [r.kind for r in vllm.reasons][-1] is PinReasonKind.CUDA_BUILD
    text = render_lock(lock, LockFormat.REQUIREMENTS)
    assert f"vllm @ {vllm.wheel}  # target vllm==0.7.3; its cu118 build, for torch 2.5.1+cu118" in text
    assert "torch==2.5.1+cu118" in text and "--extra-index-url https://download.pytorch.org/whl/cu118" in text
    constraints = render_lock(lock, LockFormat.CONSTRAINTS)  # a constraints file takes no URL
    assert "vllm==0.7.3+cu118  #" in constraints and "xformers==0.0.28.post3  #" in constraints and " @ " not in constraints


def test_a_tagged_build_comes_from_the_pytorch_index(shipped):
    lock = resolve(["vllm==0.6.1.post2"], make_facts(cc="7.0", driver=R520, python="3.10"), shipped)
    xformers = lock.pin("xformers")
    assert xformers is not None and xformers.full_version == "0.0.27.post2+cu118" and xformers.wheel is None
    assert xformers.index_url == "https://download.pytorch.org/whl/cu118"
    vllm = lock.pin("vllm")
    assert vllm is not None and vllm.wheel is not None and vllm.wheel.endswith("vllm-0.6.1.post2+cu118-cp310-cp310-manylinux1_x86_64.whl")


def test_a_driver_that_runs_the_default_cuda_keeps_the_default_builds(shipped):
    # R550 runs CUDA 12.4: vLLM 0.10's cu118 build would fit, but the default builds of an older
    # release are the tested path; another CUDA's build is a fallback, not a way to newer releases.
    lock = resolve(["vllm"], make_facts(cc="9.0", driver="550.54.15"), shipped)
    assert all(p.wheel is None for p in lock.pins)
    assert lock.pin("vllm").version == "0.8.5.post1"


def test_a_pinned_torch_build_brings_the_matching_builds(shipped):
    lock = resolve(["torch==2.5.1+cu118", "vllm==0.7.3"], make_facts(cc="9.0", driver="550.54.15"), shipped)
    assert lock.pin("vllm").full_version == "0.7.3+cu118" and lock.pin("xformers").wheel is not None


def test_no_cu118_build_means_no_set_on_a_cuda_11_driver(shipped):
    from compat.errors import ResolutionError

    with pytest.raises(ResolutionError, match="no compatible set"):  # 0.6.2 has no +cu118 wheel (vllm-project/vllm#9353)
        resolve(["vllm==0.6.2"], make_facts(cc="7.0", driver=R520, python="3.10"), shipped)


def test_the_plan_installs_the_builds_by_url(shipped):
    installed = (
        Distribution(name="torch", version="2.5.1", requires=()),
        Distribution(name="vllm", version="0.7.3", requires=("torch==2.5.1",)),
    )
    facts = make_facts(cc="7.0", driver=R520, python="3.10", packages=installed)
    lock = resolve(["vllm==0.7.3"], facts, shipped)
    steps = {s.kind: s for s in plan(facts, lock).steps}
    assert any(p.startswith("vllm @ https://github.com/vllm-project/vllm/releases/download/v0.7.3/") for p in steps[StepKind.PACKAGES].packages)
    assert steps[StepKind.TORCH].index_url == "https://download.pytorch.org/whl/cu118"


def test_the_full_lock_asks_uv_for_a_url_build_by_its_url(monkeypatch):
    from compat import api
    from compat.sources import uv_compile

    seen = {}

    def fake(request, **_):
        seen["request"] = request
        return uv_compile.CompileFailed(message="offline", offline=True)

    monkeypatch.setattr(uv_compile, "uv_compile", fake)
    api.lock_full(api.LockRequest(targets=("vllm==0.7.3",), declared=api.Declared(gpus="1xV100", driver=R520), python_version="3.10",
                                  allow_partial=True))
    request = seen["request"]
    assert any(r.startswith("vllm @ https://") for r in request.requirements)
    assert not any(c.startswith(("vllm==", "xformers==")) for c in request.constraints)
    assert "torch==2.5.1+cu118" in request.constraints


@pytest.mark.parametrize("target", ["torch==2.10.0+cu129", "torch==2.9.1+cu129", "torch==2.9.0+cu129"])
def test_torch_cu129_builds_of_2_9_and_2_10_lock(shipped, target):
    lock = resolve([target], make_facts(gpus=8, driver="580.95.05"), shipped)  # R575+ runs CUDA 12.9
    torch = lock.pin("torch")
    assert torch is not None and torch.full_version == target.split("==")[1]
    assert torch.index_url is not None and torch.index_url.endswith("/cu129")
