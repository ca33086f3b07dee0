"""Script facts read with ast from real-shaped training scripts (never run)."""

from __future__ import annotations

from compat.sources.probe.script import DYNAMIC, parse_script, read_script
from tests.explain.conftest import SCRIPTS


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


def test_unparsable_and_unreadable_scripts_give_parse_error(tmp_path):
    assert "line 2" in read_script(SCRIPTS / "broken.py").parse_error
    assert read_script(tmp_path / "missing.py").parse_error.startswith("cannot read")
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    assert read_script(nul).parse_error.startswith("not valid Python")
    assert read_script(tmp_path).parse_error.startswith("cannot read")
