# A Trainer subclass that reads .config from the model the Trainer hands it (possibly wrapped).
import os

from transformers import Trainer


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if model.config.is_encoder_decoder:
            raise ValueError("decoder-only models only")
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


model_path = os.environ.get("MODEL", "gpt2")
trainer = MyTrainer(model=model_path)
trainer.train()
