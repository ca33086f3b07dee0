"""Locks over the shipped matrix never land on the five researched failures."""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import Version
from typer.testing import CliRunner

from compat.cli import app

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"
BASE = ["--python-version", "3.11", "--driver", "550.54.15", "--format", "json"]


def _lock(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["lock", *args, *BASE])
    return result.exit_code, (json.loads(result.stdout) if result.exit_code == 0 else {"error": result.output})


def _pins(doc: dict) -> dict[str, str]:
    return {p["name"]: p["version"] for p in doc["pins"]}


def test_grpo_with_vllm_on_two_gpus_gets_vllm_072():
    code, doc = _lock("trl[vllm]==0.15.2", "--gpus", "2xA100", "--script", str(SCRIPTS / "grpo_vllm.py"))
    assert code == 0, doc
    pins = _pins(doc)
    assert pins["vllm"] == "0.7.2" and pins["torch"].startswith("2.5.1")


def test_an_older_vllm_is_kept_off_for_grpo_on_two_gpus():
    code, doc = _lock("trl==0.15.2", "vllm<0.8", "--gpus", "2xA100", "--launcher", "accelerate",
                      "--script", str(SCRIPTS / "grpo_vllm.py"))
    assert code == 0, doc
    assert Version(_pins(doc)["vllm"]) >= Version("0.7.1")


def test_online_dpo_with_plain_python_on_four_gpus_avoids_trl_014_to_0161():
    code, doc = _lock("trl<0.17", "--gpus", "4xA100", "--launcher", "python", "--script", str(SCRIPTS / "online_dpo.py"))
    assert code == 0, doc
    trl = Version(_pins(doc)["trl"])
    assert not (Version("0.14") <= trl < Version("0.17")), trl


def test_grpo_under_fsdp_gets_a_trl_that_moves_the_reference_model():
    code, doc = _lock("trl<0.19", "--gpus", "8xH100", "--launcher", "accelerate",
                      "--accelerate-config", str(SCRIPTS / "accelerate_fsdp.yaml"), "--script", str(SCRIPTS / "grpo_fsdp.py"))
    assert code == 0, doc
    assert _pins(doc)["trl"].startswith("0.18")


def test_device_map_auto_under_torchrun_has_no_set_below_transformers_454_and_says_why():
    code, doc = _lock("transformers<4.54", "trl==0.19.1", "--gpus", "2xH100", "--launcher", "torchrun",
                      "--script", str(SCRIPTS / "grpo_device_map_auto.py"))
    assert code == 1
    assert "device-map-auto-silent-tensor-parallel" in doc["error"]
