"""A small API timeline written in a test's directory: the releases and keys the drift, doctor and lock
tests look up, as `compat matrix refresh --api` stores them (matrix/api/<package>/)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

TRANSFORMERS = ["4.36.2", "4.38.2", "4.39.0", "4.45.2", "4.46.0", "4.57.1", "5.0.0"]
TRL = ["0.7.10", "0.7.11", "0.8.0", "0.15.2", "0.17.0", "0.19.0", "0.23.0"]
VLLM = ["0.9.2", "0.10.1", "0.10.2", "0.11.0"]

INDEX: dict[str, tuple[list[str], dict[str, dict[str, str]]]] = {
    "transformers": (TRANSFORMERS, {
        "module": {"transformers": "0-6", "transformers.generation": "0-6"},
        "name": {
            "transformers:top_k_top_p_filtering": "0-1",  # removed in 4.39.0
            "transformers:AutoModelForCausalLM": "0-6",
            "transformers:PreTrainedModel": "0-6",
            "transformers:Trainer": "0-6",
            "transformers:EncoderDecoderCache": "3-6",  # added in 4.45.2
        },
        "param": {
            "transformers:Trainer(model)": "0-6",
            "transformers:Trainer(tokenizer)": "0-5",  # removed in 5.0.0
            "transformers:Trainer(processing_class)": "4-6",
        },
        "model_type": {"llama": "0-6", "qwen3": "5-6"},
    }),
    "trl": (TRL, {
        "module": {"trl": "0-6", "trl.core": "0-6", "trl.trainer.grpo_trainer": "3-6"},
        "name": {"trl:PPOTrainer": "0-6", "trl:GRPOTrainer": "3-6", "trl:GRPOConfig": "3-6"},
        "param": {"trl:GRPOConfig(use_vllm)": "3-6"},
        "cli": {"trl": "0-6", "trl sft": "0-6", "trl vllm-serve": "4-6"},
        "imports": {
            "trl.core transformers top_k_top_p_filtering top_level": "0-1",
            "trl.core transformers PreTrainedModel top_level": "0-6",
            "trl.core transformers.generation GenerationConfig lazy": "0-6",
            "trl.trainer.grpo_trainer vllm.model_executor.guided_decoding GuidedDecodingParams guarded": "5",
            "trl.trainer.utils transformers EncoderDecoderCache top_level": "5-6",
        },
    }),
    "vllm": (VLLM, {
        "module": {"vllm": "0-3", "vllm.model_executor": "0-3", "vllm.model_executor.guided_decoding": "0-1"},
        "name": {"vllm:LLM": "0-3"},
    }),
}


def write_index(base: Path, only: tuple[str, ...] | None = None) -> Path:
    """The fixture's packages under `base`/api; returns `base` (a matrix overlay directory)."""
    for package, (releases, tables) in INDEX.items():
        if only is not None and package not in only:
            continue
        d = base / "api" / package
        d.mkdir(parents=True, exist_ok=True)
        meta = {"schema": 1, "package": package, "top_level": [package], "releases": releases,
                "files": [f"{package}-{r}-py3-none-any.whl" for r in releases], "missing": {}}
        (d / "releases.json").write_text(json.dumps(meta))
        for stem, table in tables.items():
            (d / f"{stem}.json.gz").write_bytes(gzip.compress(json.dumps(table).encode()))
    return base
