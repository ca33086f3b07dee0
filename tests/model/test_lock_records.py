"""The lock's records and their words: every kind of rejection, pin reason, note, constraint and conflict cause."""

from __future__ import annotations

import pytest

from compat.errors import ResolutionError
from compat.model.asker import Asker, AskerKind
from compat.model.conflict import (
    Alternative,
    Ask,
    ConflictCause,
    ConflictKind,
    Shortfall,
    Upgrade,
)
from compat.model.lock import (
    Constraint,
    ConstraintKind,
    GpuCount,
    HardwareSummary,
    LockNote,
    LockNoteKind,
    PinReason,
    PinReasonKind,
    Step,
    StepKind,
)
from compat.model.rejection import Rejection, RejectionKind, mentions
from compat.model.unknown import Unknown
from compat.report.lock import (
    cause_text,
    constraint_text,
    hardware_lines,
    note_text,
    reason_text,
    rejection_text,
    render_conflict,
)
from compat.report.plan import step_why

VLLM = Asker(kind=AskerKind.PACKAGE, package="vllm", version="0.7.2")
NO_SM120 = Rejection(kind=RejectionKind.NO_ARCH, package="torch", version="2.5.1", compute_capability="12.0", gpu="RTX 5090")

REJECTIONS = {
    RejectionKind.TORCH_NOT_CURATED: (
        Rejection(kind=RejectionKind.TORCH_NOT_CURATED, package="torch", version="1.0.0"),
        "torch 1.0.0 is not in matrix/torch.toml (its CUDA builds are unknown)",
    ),
    RejectionKind.NO_PYTHON_WHEELS: (
        Rejection(kind=RejectionKind.NO_PYTHON_WHEELS, package="torch", version="2.5.1", python="3.13.0", supported=">=3.9"),
        "torch 2.5.1 has no wheels for Python 3.13.0 (>=3.9)",
    ),
    RejectionKind.NO_CUDA_BUILD: (
        Rejection(kind=RejectionKind.NO_CUDA_BUILD, package="torch", version="2.5.1"),
        "torch 2.5.1 has no CUDA build",
    ),
    RejectionKind.NO_ARCH: (NO_SM120, "no torch 2.5.1 build has sm_120 (RTX 5090)"),
    RejectionKind.NEEDS_DRIVER: (
        Rejection(kind=RejectionKind.NEEDS_DRIVER, package="torch", version="2.6.0", driver="470.82.01", max_cuda="11.4",
                  fallback_variant="cu118"),
        ("every torch 2.6.0 build needs a newer driver than 470.82.01 (CUDA <= 11.4); "
         "cu118 would run under minor-version compatibility (--minor-compat)"),
    ),
    RejectionKind.NO_BUILD_FITS: (
        Rejection(kind=RejectionKind.NO_BUILD_FITS, package="torch", version="2.7.0", problems=(
            Rejection(kind=RejectionKind.NO_ARCH, package="torch", version="2.7.0", variant="cu126", compute_capability="12.0", gpu="RTX 5090"),
            Rejection(kind=RejectionKind.NEEDS_DRIVER, package="torch", version="2.7.0", variant="cu128", min_driver="570.26"),
            Rejection(kind=RejectionKind.NEEDS_DRIVER, package="torch", version="2.7.0", variant="cu130"),
            Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version="2.7.0", variant="cu118"),
        )),
        ("no torch 2.7.0 build fits: cu126 has no sm_120 (RTX 5090); cu128 needs driver >= 570.26; "
         "cu130 needs a newer driver; cu118 has another CUDA major than the public-index build"),
    ),
    RejectionKind.OTHER_CUDA_MAJOR: (
        Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version="2.13.0", variant="cu126", asker=VLLM),
        ("vllm 0.7.2 ships kernels for the CUDA major of torch 2.13.0's public-index build; "
         "the cu126 build that fits this hardware has another"),
    ),
    RejectionKind.YANKED: (
        Rejection(kind=RejectionKind.YANKED, package="vllm", version="0.31.1", yanked_reason="broken wheel"),
        "vllm 0.31.1 is yanked (broken wheel)",
    ),
    RejectionKind.REQUIRES_PYTHON: (
        Rejection(kind=RejectionKind.REQUIRES_PYTHON, package="trl", version="1.16.0", python="3.10.0", supported=">=3.11"),
        "trl 1.16.0 requires Python >=3.11",
    ),
    RejectionKind.NO_SUCH_BUILD: (
        Rejection(kind=RejectionKind.NO_SUCH_BUILD, package="torch", version="2.13.0", variant="cu999"),
        "torch 2.13.0 has no cu999 build",
    ),
    RejectionKind.UPLOADED_AFTER: (
        Rejection(kind=RejectionKind.UPLOADED_AFTER, package="vllm", version="0.8.0", date="2025-03-01"),
        "vllm 0.8.0 was uploaded after 2025-03-01 (--exclude-newer)",
    ),
    RejectionKind.MISSING_EXTRA: (
        Rejection(kind=RejectionKind.MISSING_EXTRA, package="trl", version="0.13.0", extra="vllm"),
        "trl 0.13.0 has no [vllm] extra",
    ),
    RejectionKind.DEAD_DEPENDENCY: (
        Rejection(kind=RejectionKind.DEAD_DEPENDENCY, package="vllm", version="0.7.2", dependency="torch",
                  specifier="==2.5.1", exact=True, because=NO_SM120),
        "vllm 0.7.2 pins torch==2.5.1; no torch 2.5.1 build has sm_120 (RTX 5090)",
    ),
    RejectionKind.BROKEN_LINK: (
        Rejection(kind=RejectionKind.BROKEN_LINK, package="transformers", version="4.39.0",
                  asker=Asker(kind=AskerKind.PACKAGE, package="trl", version="0.7.10"), imported="transformers:top_k_top_p_filtering"),
        "trl 0.7.10 imports transformers:top_k_top_p_filtering at top level; transformers 4.39.0 does not have it (API index)",
    ),
    RejectionKind.EXTENSION_MIN_ARCH: (
        Rejection(kind=RejectionKind.EXTENSION_MIN_ARCH, package="flash-attn", version="2.8.3", min_compute_capability="8.0",
                  compute_capability="7.5", gpu="T4"),
        "flash-attn needs compute capability >= 8.0; T4 is sm_75",
    ),
    RejectionKind.EXTENSION_NOT_CURATED: (
        Rejection(kind=RejectionKind.EXTENSION_NOT_CURATED, package="flash-attn", version="2.8.3.post2"),
        "flash-attn 2.8.3.post2: its prebuilt wheels are not in matrix/extensions.toml",
    ),
    RejectionKind.EXTENSION_NO_PYTHON: (
        Rejection(kind=RejectionKind.EXTENSION_NO_PYTHON, package="flash-attn", version="2.6.3", python="3.13.0"),
        "flash-attn 2.6.3 has no wheels for Python 3.13.0",
    ),
    RejectionKind.EXTENSION_CUDA_MAJOR: (
        Rejection(kind=RejectionKind.EXTENSION_CUDA_MAJOR, package="flash-attn", version="2.8.3", cuda_major=13),
        "flash-attn 2.8.3 has no wheels for CUDA 13 torch builds",
    ),
}


def test_every_rejection_kind_has_words():
    assert set(REJECTIONS) == set(RejectionKind)


@pytest.mark.parametrize("kind", list(RejectionKind), ids=lambda k: k.value)
def test_rejection_text(kind):
    rejection, text = REJECTIONS[kind]
    assert rejection_text(rejection) == text


def test_rejection_corners():
    no_yank_reason = Rejection(kind=RejectionKind.YANKED, package="vllm", version="0.31.1")
    assert rejection_text(no_yank_reason) == "vllm 0.31.1 is yanked"
    nothing_in_range = Rejection(kind=RejectionKind.DEAD_DEPENDENCY, package="vllm", version="0.28.0", dependency="torch",
                                 specifier=">=9", exact=False)
    assert rejection_text(nothing_in_range) == "vllm 0.28.0 requires torch>=9; no torch release in >=9"
    old_driver = Rejection(kind=RejectionKind.NEEDS_DRIVER, package="torch", version="2.6.0", driver="390.1")
    assert rejection_text(old_driver) == "every torch 2.6.0 build needs a newer driver than 390.1 (older than every curated CUDA)"
    only_other = Rejection(kind=RejectionKind.OTHER_CUDA_MAJOR, package="torch", version="2.13.0")
    assert rejection_text(only_other) == "only torch 2.13.0 builds of another CUDA major than its public-index build fit"


def test_mentions_looks_through_builds_and_dependencies():
    dead = REJECTIONS[RejectionKind.DEAD_DEPENDENCY][0]
    assert mentions(dead, frozenset({RejectionKind.NO_ARCH}))
    assert not mentions(dead, frozenset({RejectionKind.NEEDS_DRIVER}))
    mixed = REJECTIONS[RejectionKind.NO_BUILD_FITS][0]
    assert mentions(mixed, frozenset({RejectionKind.NEEDS_DRIVER}))
    # A yank reason is the index's words: nothing is read from it.
    yanked = Rejection(kind=RejectionKind.YANKED, package="x", version="1", yanked_reason="needs a newer driver, no sm_90")
    assert not mentions(yanked, frozenset({RejectionKind.NEEDS_DRIVER, RejectionKind.NO_ARCH}))


EXCLUDE = Constraint(kind=ConstraintKind.EXCLUDE, package="vllm", specifier="<0.7.1", signature="grpo-vllm-device-mismatch",
                     evidence=("vllm 0.7.0 (<0.7.1)", "2 visible GPU(s) (>=2)"))


@pytest.mark.parametrize(("constraint", "text"), [
    (Constraint(kind=ConstraintKind.REQUIRE, package="vllm", specifier=">=0.7.2", signature="s", evidence=()), "vllm>=0.7.2"),
    (EXCLUDE, "vllm not <0.7.1"),
    (Constraint(kind=ConstraintKind.EXCLUDE, package="flash-attn", specifier="", signature="s", evidence=()), "no flash-attn"),
])
def test_constraint_text(constraint, text):
    assert constraint_text(constraint) == text


@pytest.mark.parametrize(("reason", "text"), [
    (PinReason(kind=PinReasonKind.TARGET, package="vllm"), "target"),
    (PinReason(kind=PinReasonKind.TARGET, package="trl", extras=("vllm",), specifier="==0.15.2"), "target trl[vllm]==0.15.2"),
    (PinReason(kind=PinReasonKind.PARENT, package="torch", specifier="==2.5.1", exact=True, parent="vllm", parent_version="0.7.2"),
     "vllm 0.7.2 pins torch==2.5.1"),
    (PinReason(kind=PinReasonKind.PARENT, package="vllm", specifier=">=0.22.0", parent="trl", parent_version="1.16.0",
               parent_extras=("vllm",)), "trl 1.16.0[vllm] requires vllm>=0.22.0"),
    (PinReason(kind=PinReasonKind.PARENT, package="torch", parent="flashinfer-python", parent_version="0.6.6"),
     "flashinfer-python 0.6.6 requires torch"),
    (PinReason(kind=PinReasonKind.TORCH_BUILD, variant="cu128", cuda="12.8", compute_capabilities=("9.0", "12.0"),
               driver="580.95.05", default=False),
     "cu128 build (CUDA 12.8) has sm_90, sm_120, runs on driver 580.95.05; not the public index's default build"),
    (PinReason(kind=PinReasonKind.TORCH_BUILD, variant="cpu"), "cpu build"),
    (PinReason(kind=PinReasonKind.KEPT_OFF, constraint=EXCLUDE), "kept off grpo-vllm-device-mismatch: vllm not <0.7.1"),
])
def test_pin_reason_text(reason, text):
    assert reason_text(reason) == text


def test_pin_reasons_sort_as_their_words():
    reasons = [
        PinReason(kind=PinReasonKind.PARENT, package="torch", parent="vllm", parent_version="0.31.0", specifier="==2.13.0", exact=True),
        PinReason(kind=PinReasonKind.TARGET, package="torch"),
        PinReason(kind=PinReasonKind.PARENT, package="torch", parent="torchvision", parent_version="0.28.0", specifier="==2.13.0", exact=True),
        PinReason(kind=PinReasonKind.PARENT, package="torch", parent="accelerate", parent_version="1.15.0", specifier=">=2.0.0"),
        PinReason(kind=PinReasonKind.PARENT, package="torch", parent="trl", parent_version="1.16.0", parent_extras=("vllm",)),
        PinReason(kind=PinReasonKind.PARENT, package="torch", parent="trl", parent_version="1.16.0"),
    ]
    ordered = [reason_text(r) for r in sorted(reasons, key=PinReason.sort_key)]
    assert ordered == sorted(ordered)


@pytest.mark.parametrize(("hw", "lines"), [
    (HardwareSummary(gpus=Unknown(reason="no nvidia-smi"), driver=Unknown(reason="no driver"), max_cuda=None), ("GPUs: unknown",)),
    (HardwareSummary(gpus=(), driver=None, max_cuda=None), ("GPUs: none", "driver: none")),
    (HardwareSummary(gpus=(GpuCount(name="H100", compute_capability=None, count=1), GpuCount(name="H100", compute_capability="9.0", count=7)),
                     driver="580.95.05", max_cuda="13.0"),
     ("1x H100", "7x H100 (sm_90)", "driver 580.95.05 (CUDA <= 13.0)")),
    (HardwareSummary(gpus=(GpuCount(name="K80", compute_capability="3.7", count=2),), driver="340.108", max_cuda=None),
     ("2x K80 (sm_37)", "driver 340.108 (older than every curated CUDA)")),
])
def test_hardware_lines(hw, lines):
    assert hardware_lines(hw) == lines


@pytest.mark.parametrize(("note", "text"), [
    (LockNote(kind=LockNoteKind.GPUS_UNKNOWN, reason="nvidia-smi not found"),
     "GPUs unknown (nvidia-smi not found): torch builds not checked against the GPU architecture; declare --gpus"),
    (LockNote(kind=LockNoteKind.GPU_ARCH_UNKNOWN, gpu_index=1, gpu="H100"), "GPU 1 H100: compute capability unknown, not checked"),
    (LockNote(kind=LockNoteKind.DRIVER_UNKNOWN, reason="no driver"),
     "driver unknown (no driver): CUDA builds not checked against it; declare --driver"),
    (LockNote(kind=LockNoteKind.REQUIREMENTS_UNKNOWN, package="deepspeed", version="0.16.0"),
     "deepspeed 0.16.0: its requirements are unknown to the matrix (sdist only); pip resolves them"),
    (LockNote(kind=LockNoteKind.AFTER_TORCH, package="flash-attn", version="2.8.3"),
     "flash-attn compiles against torch: install it after the rest with `pip install --no-build-isolation flash-attn==2.8.3`"),
    (LockNote(kind=LockNoteKind.STILL_MATCHES, signature="s", title="t", requires=("a>=1", "b<2")),
     "known failure s still applies (t): a>=1, b<2"),
    (LockNote(kind=LockNoteKind.STILL_MATCHES, signature="s", title="t", advice="upgrade a", requires=("a>=1",)),
     "known failure s still applies (t): upgrade a"),
])
def test_note_text(note, text):
    assert note_text(note) == text


def _ask(kind: AskerKind, **kw) -> Ask:
    asker = Asker(kind=kind, **kw)
    return Ask(asker=asker, package="torch", extras=(), specifier="==2.5.1", exact=True)


@pytest.mark.parametrize(("cause", "text"), [
    (ConflictCause(kind=ConflictKind.REQUIREMENTS, package="torch",
                   asks=(_ask(AskerKind.TARGET), _ask(AskerKind.PACKAGE, package="vllm", version="0.7.2"),
                         _ask(AskerKind.CATALOG, signature="sig")),
                   shortfall=Shortfall.CONTRADICTORY),
     ("you ask for torch==2.5.1; vllm 0.7.2 pins torch==2.5.1; the catalog (sig) requires torch==2.5.1; "
      "no release meets all of these at once")),
    (ConflictCause(kind=ConflictKind.REQUIREMENTS, package="vllm", asks=(_ask(AskerKind.TARGET),),
                   shortfall=Shortfall.NO_RELEASE, specifier="==9.9.9"),
     "you ask for torch==2.5.1; the matrix has no vllm release in ==9.9.9"),
    (ConflictCause(kind=ConflictKind.REQUIREMENTS, package="vllm", shortfall=Shortfall.NO_RELEASE), "the matrix has no vllm release"),
    (ConflictCause(kind=ConflictKind.REQUIREMENTS, package="torch", shortfall=Shortfall.REJECTED,
                   rejections=(NO_SM120, NO_SM120, REJECTIONS[RejectionKind.NO_CUDA_BUILD][0],
                               REJECTIONS[RejectionKind.YANKED][0], REJECTIONS[RejectionKind.TORCH_NOT_CURATED][0]),
                   upgrades=(Upgrade(package="vllm", version="0.9.0"), Upgrade(package="torch", version="2.7.0")),
                   alternative=Alternative.ANOTHER_GPU),
     ("no torch 2.5.1 build has sm_120 (RTX 5090); torch 2.5.1 has no CUDA build; and 2 more; "
      "use vllm >= 0.9.0 or use torch >= 2.7.0 or another GPU")),
    (ConflictCause(kind=ConflictKind.REQUIREMENTS, package="torch", upgrades=(Upgrade(package="torch", version="2.7.0"),),
                   alternative=Alternative.NEWER_DRIVER), "use torch >= 2.7.0 or a newer driver"),
    (ConflictCause(kind=ConflictKind.IMPOSED, constraint=EXCLUDE),
     "(to avoid grpo-vllm-device-mismatch, the lock also required vllm not <0.7.1: vllm 0.7.0 (<0.7.1), 2 visible GPU(s) (>=2))"),
    (ConflictCause(kind=ConflictKind.ALWAYS_KNOWN_FAILURE, signature="sig", title="a title"),
     "every set that meets the targets hits known failure sig (a title)"),
    (ConflictCause(kind=ConflictKind.TOO_DEEP), "pin one of the targets more tightly, or allow more time with COMPAT_SEARCH_SECONDS"),
    (ConflictCause(kind=ConflictKind.TOO_DEEP, seconds=20.0, backtracked=("transformers", "peft"), attempts=("a", "b")),
     "tried a; then b; it backtracked most on transformers, peft; pin one of the targets (or those packages) more tightly, "
     "or allow more time with COMPAT_SEARCH_SECONDS"),
])
def test_cause_text(cause, text):
    assert cause_text(cause) == text


def test_render_conflict_and_the_error_summary():
    causes = (ConflictCause(kind=ConflictKind.TOO_DEEP), ConflictCause(kind=ConflictKind.IMPOSED, constraint=EXCLUDE))
    error = ResolutionError(causes)
    assert render_conflict(["trl", "vllm"], error) == (
        "compat: no compatible set for trl vllm:\n"
        "  - pin one of the targets more tightly, or allow more time with COMPAT_SEARCH_SECONDS\n"
        "  - (to avoid grpo-vllm-device-mismatch, the lock also required vllm not <0.7.1: "
        "vllm 0.7.0 (<0.7.1), 2 visible GPU(s) (>=2))\n"
    )
    assert str(error) == "no compatible set (too-deep, imposed grpo-vllm-device-mismatch)"


def test_a_search_that_stopped_is_not_called_no_compatible_set():
    error = ResolutionError((ConflictCause(kind=ConflictKind.TOO_DEEP, seconds=20.0, attempts=("the targets as given",)),))
    assert render_conflict(["trl"], error) == (
        "compat: the search for a set for trl stopped at its bound (20 s) without an answer; this is not proof that no set exists:\n"
        "  - tried the targets as given; pin one of the targets more tightly, or allow more time with COMPAT_SEARCH_SECONDS\n"
    )


@pytest.mark.parametrize(("step", "text"), [
    (Step(kind=StepKind.UNINSTALL, packages=("torch",), command=()),
     "remove builds tied to the torch being replaced (another CUDA variant, or compiled against it)"),
    (Step(kind=StepKind.TORCH, packages=(), command=(), index_url="https://download.pytorch.org/whl/cu126",
          reasons=(PinReason(kind=PinReasonKind.TORCH_BUILD, variant="cu126", cuda="12.6", default=False),)),
     "torch first, from the PyTorch wheel index; cu126 build (CUDA 12.6); not the public index's default build"),
    (Step(kind=StepKind.TORCH, packages=(), command=(), reasons=(PinReason(kind=PinReasonKind.TARGET, package="torch"),)),
     "torch first, from the default index; target"),
    (Step(kind=StepKind.PACKAGES, packages=(), command=()), "the packages that pin or need that torch"),
    (Step(kind=StepKind.EXTENSIONS, packages=(), command=()), "compiled against torch: rebuilt last, against the torch now installed"),
])
def test_step_why(step, text):
    assert step_why(step) == text


def test_a_packages_step_without_a_torch_step_before_it_does_not_speak_of_that_torch():
    assert step_why(Step(kind=StepKind.PACKAGES, packages=(), command=()), after_torch=False) == "the packages to move, in one install"
