# GRPO with a model loaded by the user with device_map="auto", launched with `accelerate launch`,
# as in huggingface/accelerate#3565.
from datasets import load_dataset
from transformers import AutoModelForCausalLM
from trl import GRPOConfig, GRPOTrainer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B-Instruct", device_map="auto", torch_dtype="auto")
dataset = load_dataset("trl-lib/tldr", split="train")


def reward_len(completions, **kwargs):
    return [-abs(20 - len(completion)) for completion in completions]


trainer = GRPOTrainer(model=model, reward_funcs=reward_len, args=GRPOConfig(output_dir="out"), train_dataset=dataset)
trainer.train()
