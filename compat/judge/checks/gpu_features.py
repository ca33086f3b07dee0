"""What the GPUs can compute: bf16, FP8, FlashAttention-2."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import about, distinct_gpus, found, gpu_label
from compat.matrix import Matrix
from compat.matrix.torch import cc_key
from compat.model.facts import AccelerateConfig, Facts, Gpu
from compat.model.findings import Finding, observed
from compat.model.unknown import Unknown


def _gpus_below(facts: Facts, floor: tuple[int, int]) -> tuple[Gpu, ...]:
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        return ()
    return tuple(
        g for g in distinct_gpus(gpus)
        if isinstance(g.compute_capability, str) and cc_key(g.compute_capability) < floor
    )


BF16 = "bf16-unsupported-gpu-trainer"
NO_BF16 = "gpu-without-bf16"
FP8 = "fp8-unsupported-gpu"
FLASH_ATTN = "flash-attn-requires-ampere"

OWNS = {
    BF16: frozenset[str](),
    NO_BF16: frozenset({"gpu"}),
    FP8: frozenset({"gpu"}),
    FLASH_ATTN: frozenset[str](),
}
"""The catalog entries these checks speak through, and the `{fields}` they fill in each."""


def check_precision(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    cfg = facts.launch.accelerate
    precision = cfg.mixed_precision if isinstance(cfg, AccelerateConfig) else None
    no_bf16 = _gpus_below(facts, (8, 0))
    if no_bf16 and isinstance(cfg, AccelerateConfig) and precision == "bf16":
        yield found(matrix, BF16, evidence=(
            observed("accelerate config: mixed_precision bf16", source=cfg.path), about(facts, "gpus", gpu_label(no_bf16[0]))))
    elif no_bf16:
        yield found(matrix, NO_BF16, values={"gpu": gpu_label(no_bf16[0])},
                    evidence=(about(facts, "gpus", gpu_label(no_bf16[0])),))
    no_fp8 = _gpus_below(facts, (8, 9))
    if no_fp8 and isinstance(cfg, AccelerateConfig) and precision == "fp8":
        yield found(matrix, FP8, values={"gpu": gpu_label(no_fp8[0])},
                    evidence=(observed("accelerate config: mixed_precision fp8", source=cfg.path),
                              about(facts, "gpus", gpu_label(no_fp8[0]))))


def check_flash_attn(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    dist = facts.package("flash-attn")
    if dist is None or isinstance(dist, Unknown):
        return
    old = _gpus_below(facts, (8, 0))
    if not old:
        return
    yield found(matrix, FLASH_ATTN, evidence=(
        observed(f"flash-attn {dist.version} installed"), about(facts, "gpus", gpu_label(old[0]))))
