"""A machine without GPUs is a first-class target: locks and plans for it give a set or a reasoned "no set"."""

from __future__ import annotations

import pytest

from compat.errors import ResolutionError
from compat.matrix import load_matrix
from compat.model.conflict import ConflictKind
from compat.model.facts import Distribution
from compat.model.lock import PinReasonKind, StepKind
from compat.report.lock import LockFormat, render_lock
from compat.resolve import SearchBound, resolve, resolve_from_installed
from compat.resolve.plan import default_targets, plan
from tests.support.facts import make_facts


@pytest.fixture(scope="module")
def shipped():
    return load_matrix()


def cpu():
    return make_facts(gpus=0, driver=None)


@pytest.mark.parametrize("target", ["trl[vllm]", "vllm", "xformers"])
def test_kernels_built_for_torchs_public_build_take_that_build_on_a_cpu_target(shipped, target):
    # vLLM's and xformers' wheels link the CUDA runtime of torch's public build: under the +cpu build
    # their extension cannot load, so a CPU lock takes the public build (it imports without a GPU).
    lock = resolve([target], cpu(), shipped)
    torch = lock.pin("torch")
    assert torch is not None and torch.local is None and torch.index_url is None
    build = next(r for r in torch.reasons if r.kind is PinReasonKind.TORCH_BUILD)
    assert build.cuda is not None and build.parent
    assert "for a CPU target too: the kernels of" in render_lock(lock, LockFormat.REQUIREMENTS)


def test_a_cpu_lock_without_kernels_takes_the_cpu_build_without_cuda_only_requirements(shipped):
    lock = resolve(["trl"], cpu(), shipped)
    torch = lock.pin("torch")
    assert torch is not None and torch.local == "cpu"
    # triton (and nvidia-*) come with torch's CUDA wheels only.
    assert lock.pin("triton") is None
    assert "triton" not in render_lock(lock, LockFormat.REQUIREMENTS)


def test_a_cuda_lock_still_pins_triton(shipped):
    lock = resolve(["torch==2.13.0"], make_facts(driver="580.95.05"), shipped)
    assert lock.pin("triton") is not None


def test_a_search_that_reaches_its_bound_says_so_with_what_it_tried(shipped):
    with pytest.raises(ResolutionError) as caught:
        resolve(["trl[vllm]"], make_facts(gpus=8, driver="550.54.15"), shipped, bound=SearchBound(seconds=0.0),
                attempt="the targets as given")
    (cause,) = caught.value.causes
    assert cause.kind is ConflictKind.TOO_DEEP and cause.seconds == 0.0 and cause.attempts == ("the targets as given",)


def test_a_round_bound_holds_whatever_the_machines_speed(shipped):
    with pytest.raises(ResolutionError) as caught:
        resolve(["trl[vllm]"], make_facts(gpus=8, driver="550.54.15"), shipped, bound=SearchBound(rounds=2))
    assert [c.kind for c in caught.value.causes] == [ConflictKind.TOO_DEEP]


def test_progress_is_reported_with_rounds_and_seconds(shipped):
    seen: list[tuple[int, float]] = []
    resolve(["trl"], cpu(), shipped, bound=SearchBound(progress=lambda r, s: seen.append((r, s))))
    assert seen and [r for r, _ in seen] == sorted(r for r, _ in seen) and all(s >= 0 for _, s in seen)


def test_plan_lists_every_attempt_when_each_one_stopped(shipped):
    installed = (Distribution(name="trl", version="1.16.0", requires=("transformers>=4.56.2",)),
                 Distribution(name="transformers", version="4.46.0", requires=()))
    with pytest.raises(ResolutionError) as caught:
        resolve_from_installed(["trl"], ["transformers>=4.56.2"], make_facts(packages=installed), shipped,
                               bound=SearchBound(seconds=0.0))
    (cause,) = caught.value.causes
    assert cause.kind is ConflictKind.TOO_DEEP
    assert cause.attempts == (
        "the installed targets with doctor's fixes, installed versions first",
        "the installed targets with doctor's fixes, newest versions first",
        "the installed targets alone, newest versions first",
    )


def test_plan_falls_back_to_the_plain_lock_when_the_fixes_cannot_be_met(shipped):
    # A fix no release meets (a finding's requirement, as a stale catalog could give) must not sink the plan:
    # the installed targets alone still lock.
    installed = (Distribution(name="trl", version="1.16.0", requires=()),)
    lock = resolve_from_installed(["trl"], ["transformers<0.1"], make_facts(packages=installed), shipped)
    assert lock.pin("trl") is not None and lock.pin("transformers") is not None


def test_a_proven_conflict_is_reported_as_such(shipped):
    with pytest.raises(ResolutionError) as caught:
        resolve_from_installed(["trl==1.16.0", "transformers<4.0"], [], make_facts(), shipped)
    assert all(c.kind is not ConflictKind.TOO_DEEP for c in caught.value.causes)


def test_an_extra_whose_packages_something_else_requires_is_not_assumed_installed():
    # trl[kernels] asks only for transformers[kernels]; trl requires transformers anyway: no sign of the extra.
    trl = Distribution(name="trl", version="1.16.0", requires=(
        "transformers>=4.56.2", 'transformers[kernels]; extra == "kernels"', 'vllm<=0.31.0,>=0.22.0; extra == "vllm"'))
    transformers = Distribution(name="transformers", version="5.23.0", requires=())
    vllm = Distribution(name="vllm", version="0.31.0", requires=())
    tracked = ("trl", "transformers", "vllm")
    assert default_targets(make_facts(packages=(trl, transformers)), tracked) == ("trl",)
    assert default_targets(make_facts(packages=(trl, transformers, vllm)), tracked) == ("trl[vllm]", "vllm")


def test_the_packages_step_names_the_pytorch_index_only_for_a_build_it_installs(shipped):
    installed = (Distribution(name="torch", version="2.13.0+cpu", requires=()),
                 Distribution(name="trl", version="1.16.0", requires=()),
                 Distribution(name="transformers", version="4.46.0", requires=()))
    facts = make_facts(gpus=0, driver=None, packages=installed)
    lock = resolve_from_installed(["trl"], ["transformers>=4.56.2"], facts, shipped)
    result = plan(facts, lock)
    assert StepKind.TORCH not in [s.kind for s in result.steps]
    packages = next(s for s in result.steps if s.kind is StepKind.PACKAGES)
    assert not any("index-url" in part for part in packages.command)
