"""Every built-in check id and every signature id, named here on purpose.

Adding, removing or renaming a check or a catalog signature fails these tests until the list is
edited too: ids are what users grep for, suppress and link to, so a change to them is deliberate.
"""

from __future__ import annotations

from compat.judge.checks import OWNED_IDS
from compat.matrix import load_matrix

SIGNATURE_IDS = (
    "accelerate-device-map-auto-distributed",
    "accelerate-dispatch-batches-removed",
    "accelerate-rtx4000-p2p-notimplemented",
    "bf16-unsupported-gpu-trainer",
    "bnb-compiled-without-gpu",
    "bnb-cuda-setup-failed",
    "container-cuda-newer-than-driver",
    "cuda-device-side-assert-echo",
    "cuda-driver-insufficient-runtime",
    "cuda-driver-too-old",
    "cuda-oom-generic",
    "cuda-unknown-error-init",
    "cuda-visible-devices-beyond-gpus",
    "ddp-gc-mark-ready-twice",
    "device-map-auto-silent-tensor-parallel",
    "ds-cpuadam-build-failed",
    "ds-cuda-version-mismatch-opbuild",
    "ds-no-sync-zero23",
    "ds-zero3-unwrapped-model-weight-2d",
    "dtensor-mixed-tensor",
    "extension-without-wheel-for-torch",
    "flash-attn-abi-undefined-symbol",
    "flash-attn-blackwell-no-kernel",
    "flash-attn-cudart-missing",
    "flash-attn-not-importable",
    "flash-attn-requires-ampere",
    "fp16-unscale-fp16-gradients",
    "fp8-unsupported-gpu",
    "fsdp-mixed-dtype-flatten",
    "fsdp-qlora-int-flatten",
    "gpu-arch-not-in-torch-build",
    "gpu-without-bf16",
    "grpo-fsdp-ref-model-on-cpu",
    "grpo-fsdp2-ref-model-fsdp1-wrapper",
    "grpo-vllm-device-mismatch",
    "liger-063-needs-transformers-457",
    "liger-transformers-mismatch",
    "meta-tensor-copy",
    "missing-requirement",
    "more-processes-than-gpus",
    "multi-gpu-without-launcher",
    "nccl-communicator-aborted",
    "nccl-cumem-vllm-memory",
    "nccl-duplicate-gpu",
    "nccl-p2p-hang-pcie",
    "nccl-peer-access-not-supported",
    "nccl-shm-too-small",
    "nccl-socket-ifname",
    "nccl-version-mismatch",
    "nccl-watchdog-timeout",
    "numpy2-abi-mismatch",
    "nvcc-gcc-too-new",
    "nvjitlink-cusparse-symbol",
    "online-dpo-dataparallel-config",
    "peft-encoderdecodercache-import",
    "peft-gc-no-grad-fn",
    "peft-prepare-int8-removed",
    "rendezvous-port-in-use",
    "slurm-task-gpu-binding-local-rank",
    "synced-gpus-nocache-rope",
    "system-cuda-on-ld-library-path",
    "tensor-parallel-needs-torch25",
    "torch-cpu-only-build",
    "torch-cuda-minor-compat",
    "torch-elastic-child-failed",
    "torch-import-fails",
    "torch-pin-broken-extension",
    "torch26-weights-only-resume",
    "transformers-compute-loss-num-items",
    "transformers-dynamiccache-get-max-length",
    "transformers-lazy-import-failed",
    "transformers-torch-load-requires-torch26",
    "transformers-trainer-needs-accelerate",
    "transformers-unknown-model-type",
    "triton-gpu-too-old",
    "triton-key-import",
    "trl-completion-only-collator-removed",
    "trl-dpo-ref-model-with-peft",
    "trl-grpo-batch-not-divisible",
    "trl-grpo-vllm-oom",
    "trl-grpo-zero3-gather-assert",
    "trl-more-processes-than-gpus",
    "trl-ppo-api-rewrite",
    "trl-sft-kwargs-moved-to-config",
    "trl-sftconfig-max-seq-length-removed",
    "trl-tokenizer-to-processing-class",
    "trl-top-k-top-p-filtering-import",
    "trl-transformers-v5-import-guard",
    "trl-vllm-device-removed",
    "trl-vllm-guideddecodingparams",
    "trl-vllm-serve-same-gpu",
    "trl-vllm-serve-vllm-too-old",
    "trl-vllm-server-not-up",
    "trl-vllm-version-unsupported",
    "trl-vllm-weight-sync-group-timeout",
    "unsatisfied-extra-requirement",
    "unsatisfied-requirement",
    "vllm-bf16-needs-sm80",
    "vllm-c-ext-torch-mismatch",
    "vllm-engine-core-init-failed",
    "vllm-external-launcher-world-size",
    "vllm-fork-cuda-reinit",
    "vllm-kv-cache-too-small",
    "vllm-no-cache-blocks",
    "vllm-sleep-mode-expandable-segments",
    "vllm-transformers-v5-tokenizer",
    "vllm-v1-free-memory-startup",
)

CHECK_IDS = (
    "bf16-unsupported-gpu-trainer",
    "container-cuda-newer-than-driver",
    "cuda-driver-insufficient-runtime",
    "cuda-driver-too-old",
    "cuda-visible-devices-beyond-gpus",
    "ds-cuda-version-mismatch-opbuild",
    "extension-without-wheel-for-torch",
    "flash-attn-requires-ampere",
    "fp8-unsupported-gpu",
    "gpu-arch-not-in-torch-build",
    "gpu-without-bf16",
    "missing-requirement",
    "more-processes-than-gpus",
    "multi-gpu-without-launcher",
    "nccl-p2p-hang-pcie",
    "nccl-shm-too-small",
    "nccl-version-mismatch",
    "nvcc-gcc-too-new",
    "slurm-task-gpu-binding-local-rank",
    "system-cuda-on-ld-library-path",
    "torch-cpu-only-build",
    "torch-cuda-minor-compat",
    "torch-import-fails",
    "torch-pin-broken-extension",
    "unsatisfied-extra-requirement",
    "unsatisfied-requirement",
)


def test_signature_ids_are_exactly_the_named_ones():
    loaded = [s.id for s in load_matrix().signatures]
    assert len(loaded) == len(set(loaded)), "a signature id is used twice"
    assert sorted(set(loaded) - set(SIGNATURE_IDS)) == [], "new signature: add its id to SIGNATURE_IDS"
    assert sorted(set(SIGNATURE_IDS) - set(loaded)) == [], "signature gone: remove its id from SIGNATURE_IDS"


def test_check_ids_are_exactly_the_named_ones():
    assert sorted(OWNED_IDS - set(CHECK_IDS)) == [], "new built-in check: add its id to CHECK_IDS"
    assert sorted(set(CHECK_IDS) - OWNED_IDS) == [], "check gone: remove its id from CHECK_IDS"


def test_every_check_id_is_a_signature_id():
    # A built-in check speaks through its catalog entry: the two lists overlap on purpose.
    assert sorted(set(CHECK_IDS) - set(SIGNATURE_IDS)) == []


def test_the_lists_hold_no_duplicates():
    assert len(SIGNATURE_IDS) == len(set(SIGNATURE_IDS))
    assert len(CHECK_IDS) == len(set(CHECK_IDS))
