"""Script facts read with ast from real-shaped training scripts (never run)."""

from __future__ import annotations

import pytest

from compat.errors import UsageError
from compat.sources.probe.script import DYNAMIC, parse_script, read_script
from tests.support.paths import SCRIPTS


def test_grpo_with_vllm():
    s = read_script(SCRIPTS / "grpo_vllm.py")
    assert s.parse_error is None
    assert s.trainers == ("GRPOConfig", "GRPOTrainer") and s.use_vllm is True and s.gradient_checkpointing is True
    assert s.device_maps == () and s.vllm_mode is None and s.config_access is False


def test_device_map_and_online_dpo():
    assert read_script(SCRIPTS / "grpo_device_map_auto.py").device_maps == ("auto",)
    s = read_script(SCRIPTS / "online_dpo.py")
    assert "OnlineDPOTrainer" in s.trainers and s.use_vllm is None


def test_config_access_on_a_possibly_wrapped_model():
    assert read_script(SCRIPTS / "custom_trainer_config.py").config_access is True
    assert parse_script("m = accelerator.prepare(m)\nprint(m.config)\n", path="x").config_access is True
    assert parse_script("m = load()\nprint(m.config)\n", path="x").config_access is False


def test_dynamic_values_are_not_guessed():
    s = parse_script("f(device_map=args.dm, vllm_mode=mode, use_vllm=flag)\ng(device_map={'': 0})\n", path="x")
    assert s.device_maps == ("<dict>", DYNAMIC) and s.vllm_mode == DYNAMIC and s.use_vllm is None


def test_unparsable_scripts_give_parse_error(tmp_path):
    assert "line 2" in read_script(SCRIPTS / "broken.py").parse_error
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    assert read_script(nul).parse_error.startswith("not valid Python")


def test_a_named_script_that_is_missing_or_not_a_file_is_a_usage_error(tmp_path):
    # As a missing --accelerate-config: the caller named the file, so it is their error (exit 2).
    with pytest.raises(UsageError, match="does not exist"):
        read_script(tmp_path / "missing.py")
    with pytest.raises(UsageError, match="is a directory"):
        read_script(tmp_path)


def test_more_shapes_of_a_training_script():
    s = parse_script(
        "class MyTrainer(trl.SFTTrainer):\n"
        "    def compute_loss(self, model, inputs):\n"
        "        return model.config.vocab_size\n"
        "class Plain(object):\n"
        "    pass\n"
        "a, b = accelerator.prepare(a, b)\n"
        "dpo = DPOConfig(gradient_checkpointing=False, use_cache=True, vllm_mode='server', **extra)\n"
        "load(device_map=0)\n"
        "load(device_map=None)\n",
        path="x.py",
    )
    assert s.parse_error is None
    assert s.trainers == ("DPOConfig", "SFTTrainer")
    assert s.config_access is True  # `model` inside a Trainer subclass may be wrapped
    assert (s.gradient_checkpointing, s.use_cache, s.vllm_mode) == (False, True, "server")
    assert s.device_maps == ("0", DYNAMIC)


def test_a_huge_or_deeply_nested_file_is_not_a_training_script(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (5 * 1024 * 1024 + 1))
    assert read_script(big).parse_error == "larger than 5 MiB: not a training script"
    deep = parse_script("x = " + "(" * 100_000 + ")" * 100_000 + "\n", path="deep.py")
    assert deep.parse_error is not None and deep.parse_error.startswith("not valid Python")
