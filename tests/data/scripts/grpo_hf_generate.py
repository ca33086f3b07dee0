# GRPO generating with transformers (no vLLM) and gradient checkpointing, as in huggingface/trl#2878.
from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

dataset = load_dataset("trl-lib/tldr", split="train")


def reward_len(completions, **kwargs):
    return [-abs(20 - len(completion)) for completion in completions]


args = GRPOConfig(output_dir="out", use_vllm=False, gradient_checkpointing=True, bf16=True)
trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=reward_len, args=args, train_dataset=dataset)
trainer.train()
