"""Who owns a file a traceback prints: an installed package (under site-packages, in a source checkout of a package
people run from a clone, in code a package generated for the user, or in a stack package's folder printed as a
relative path), or the user's own code (None)."""

from __future__ import annotations

import re

_PACKAGE = re.compile(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_][\w.-]*?)(?:[/\\]|\.py|\.cpython|\.abi3|\.so|-[\d])")


CHECKOUTS = frozenset({
    "accelerate", "axolotl", "deepspeed", "lmdeploy", "llamafactory", "megatron", "nemo_rl", "open_instruct", "openrlhf",
    "peft", "prime_rl", "realhf", "roll", "sglang", "skyrl_train", "swift", "transformers", "trl", "unsloth", "verl", "vllm",
})
"""Packages people run from a source checkout (a clone with `pip install -e` or PYTHONPATH): a frame inside
such a tree is the package's, not the user's, so an error raised there is not called the user's bug."""
_CHECKOUT = re.compile(r"[/\\](?:src|python)[/\\]([A-Za-z_]\w*)[/\\]|[/\\]([A-Za-z_]\w*)[/\\]\2[/\\]", re.I)
_NOT_THE_PACKAGE = r"(?:examples?|scripts|tests?|recipes?|docs|benchmarks?|notebooks|tutorials?)[/\\]"
_CHECKOUT_SUBPACKAGE = re.compile(r"[/\\]([A-Za-z_]\w*)(?=[/\\](?!" + _NOT_THE_PACKAGE + r")[A-Za-z_]\w*[/\\])", re.I)
"""A directory named for a package people run from a clone, with a subpackage under it (`.../RL/nemo_rl/models/`):
the clone itself may be named anything (NeMo-RL's is `RL`). Not the clone's examples/, scripts/, tests/, recipes/, docs/,
benchmarks/, notebooks/ or tutorials/ (`.../peft/examples/sft/utils.py`): the package's code is under its own folder
(`.../peft/src/peft/`), and a copy of an example script is the user's program, run and edited as theirs."""


RELATIVE_PACKAGES = CHECKOUTS | {
    "bitsandbytes", "flash_attn", "flashinfer", "huggingface_hub", "liger_kernel", "ray", "torch", "torchvision", "triton",
    "xformers",
}
"""Top-level packages whose own folder names a relative frame path (`vllm/v1/engine/core.py`, `torch/nn/modules/module.py`):
a paste trimmed of its site-packages prefix, or a run from a checkout's root. None of them is a folder name a program
gives its own code (unlike `datasets/` or `models/`, which are left out)."""
_RELATIVE = re.compile(r"^(?:\.[/\\])?([A-Za-z_]\w*)[/\\](?!" + _NOT_THE_PACKAGE + r")")


CALLED_BY_PATH = RELATIVE_PACKAGES | {
    "apex", "awq", "auto_gptq", "causal_conv1d", "diffusers", "einops", "lightning", "mamba_ssm", "optimum",
    "pytorch_lightning", "safetensors", "sentencepiece", "timm", "tokenizers", "torchaudio", "transformer_engine",
}
"""Import names of installed packages that a call's written path starts with (`xformers.ops.memory_efficient_attention(`,
`diffusers.DiffusionPipeline.from_pretrained(`): names no program gives a module or variable of its own, so the callee is
that package's (not `datasets`, a folder name programs give their own code, as `RELATIVE_PACKAGES` says)."""


GENERATED = {"unsloth_compiled_cache": "unsloth", "transformers_modules": "transformers_modules"}
"""Folders of code a package writes and runs for the user, by who wrote it: unsloth compiles its patched trainers and
models into `unsloth_compiled_cache/`; transformers copies a model's own code (`trust_remote_code`) into
`transformers_modules/`, written for the transformers releases its authors had. Neither is the user's code."""
_GENERATED = re.compile(r"[/\\](" + "|".join(GENERATED) + r")[/\\]")


def package_of(path: str) -> str | None:
    """The top-level package of a file under site-packages (or dist-packages), of code a package generated
    (`GENERATED`), inside a source checkout of a package people run from a clone (`.../verl/verl/...`,
    `.../src/llamafactory/...`, `.../RL/nemo_rl/models/...`), or a relative path in a package's own folder
    (`RELATIVE_PACKAGES`); else None."""
    m = _GENERATED.search(path)
    if m is not None:
        return GENERATED[m.group(1)]
    m = _PACKAGE.search(path)
    if m is not None:
        return m.group(1)
    for m in _CHECKOUT.finditer(path):
        name = (m.group(1) or m.group(2)).lower()
        if name in CHECKOUTS:
            return name
    for m in _CHECKOUT_SUBPACKAGE.finditer(path):
        if m.group(1).lower() in CHECKOUTS:
            return m.group(1).lower()
    m = _RELATIVE.match(path)
    if m is not None and m.group(1) in RELATIVE_PACKAGES:
        return m.group(1)
    return None


_PACKAGE_FOLDER = re.compile(r"^(?:\.[/\\])?(?!" + _NOT_THE_PACKAGE + r"|(?:src|lib|tools|utils|data|models|configs?|train\w*)[/\\])"
                             r"([A-Za-z_]\w*)[/\\](?!" + _NOT_THE_PACKAGE + r")[\w/\\.-]*\.py$")
"""A relative path with a folder above the file (`lmcache/integration/vllm/vllm_v1_adapter.py`), not one a project
names its own code (`src/`, `tools/`, `models/`, ...)."""


def stack_folder(path: str) -> bool:
    """Whether `path` is a relative path in a stack package's own folder (`vllm/v1/engine/core.py`)."""
    m = _RELATIVE.match(path)
    return m is not None and m.group(1) in RELATIVE_PACKAGES


def folder_package(path: str) -> str | None:
    """The folder above a file printed as a relative path (`lmcache/integration/adapter.py`: "lmcache"), unless it is
    one a project names its own code; None for a bare file or an absolute path."""
    m = _PACKAGE_FOLDER.match(path)
    return m.group(1).lower() if m is not None else None


__all__ = ["CHECKOUTS", "GENERATED", "RELATIVE_PACKAGES", "folder_package", "package_of", "stack_folder"]
