"""What the GPUs can compute: bf16, FP8, FlashAttention-2."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import declared_note, distinct_gpus, gpu_label
from compat.model.facts import AccelerateConfig, Facts, Gpu
from compat.model.findings import Finding, Fix, Severity, Status
from compat.matrix import Matrix
from compat.matrix.torch import cc_key
from compat.model.unknown import Unknown


def _gpus_below(facts: Facts, floor: tuple[int, int]) -> tuple[Gpu, ...]:
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        return ()
    return tuple(
        g for g in distinct_gpus(gpus)
        if isinstance(g.compute_capability, str) and cc_key(g.compute_capability) < floor
    )


def check_precision(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    cfg = facts.launch.accelerate
    precision = cfg.mixed_precision if isinstance(cfg, AccelerateConfig) else None
    no_bf16 = _gpus_below(facts, (8, 0))
    if no_bf16 and precision == "bf16":
        yield Finding(
            id="bf16-unsupported-gpu",
            severity=Severity.ERROR,
            status=Status.FOUND,
            title=f"bf16 mixed precision on {gpu_label(no_bf16[0])}, which has no bf16",
            cause="bf16 needs compute capability 8.0 (Ampere) or newer; transformers stops with "
            "`Your setup doesn't support bf16/gpu`.",
            fix=Fix(advice="Use fp16 (mixed_precision: fp16, TrainingArguments(fp16=True)) and tf32=False on this GPU."),
            evidence=(f"accelerate config {cfg.path}: mixed_precision bf16", gpu_label(no_bf16[0]) + declared_note(facts, "gpus")),
            refs=("lm-sys/FastChat#1191", "tatsu-lab/stanford_alpaca#133"),
        )
    elif no_bf16:
        yield Finding(
            id="gpu-without-bf16",
            severity=Severity.INFO,
            status=Status.FOUND,
            title=f"{gpu_label(no_bf16[0])} has no bf16 or tf32",
            cause="Most post-training recipes default to bf16, which needs compute capability 8.0 or newer.",
            fix=Fix(advice="Train in fp16 (fp16=True, bf16=False, tf32=False); for vLLM pass dtype='half'."),
            evidence=(gpu_label(no_bf16[0]) + declared_note(facts, "gpus"),),
            refs=("lm-sys/FastChat#1191", "vllm-project/vllm#1157"),
        )
    no_fp8 = _gpus_below(facts, (8, 9))
    if no_fp8 and precision == "fp8":
        yield Finding(
            id="fp8-unsupported-gpu",
            severity=Severity.ERROR,
            status=Status.FOUND,
            title=f"FP8 mixed precision on {gpu_label(no_fp8[0])}, which has no FP8 tensor cores",
            cause="FP8 training needs compute capability 8.9 (Ada) or 9.0 (Hopper) and newer.",
            fix=Fix(advice="Use bf16 mixed precision on this GPU."),
            evidence=(f"accelerate config {cfg.path}: mixed_precision fp8", gpu_label(no_fp8[0])),
            refs=("https://huggingface.co/docs/accelerate/usage_guides/low_precision_training",),
        )


def check_flash_attn(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    dist = facts.package("flash-attn")
    if dist is None or isinstance(dist, Unknown):
        return
    old = _gpus_below(facts, (8, 0))
    if not old:
        return
    yield Finding(
        id="flash-attn-needs-ampere",
        severity=Severity.WARNING,
        status=Status.FOUND,
        title=f"flash-attn {dist.version} is installed, but {gpu_label(old[0])} predates Ampere",
        cause="FlashAttention-2 supports compute capability 8.0 and newer only; asking for "
        "attn_implementation='flash_attention_2' fails with `FlashAttention only supports Ampere GPUs or newer`.",
        fix=Fix(advice="Use attn_implementation='sdpa' (or 'eager') on this GPU."),
        evidence=(f"flash-attn {dist.version} installed", gpu_label(old[0]) + declared_note(facts, "gpus")),
        refs=("Dao-AILab/flash-attention#762", "huggingface/transformers#28188"),
    )
