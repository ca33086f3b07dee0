# GRPO with a reference model (default beta) under FSDP, as in huggingface/trl#3348.
from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

dataset = load_dataset("trl-lib/tldr", split="train")


def reward_len(completions, **kwargs):
    return [-abs(20 - len(completion)) for completion in completions]


args = GRPOConfig(output_dir="out", beta=0.04)
trainer = GRPOTrainer(model="Qwen/Qwen2-0.5B-Instruct", reward_funcs=reward_len, args=args, train_dataset=dataset)
print(trainer.ref_model.device)
trainer.train()
