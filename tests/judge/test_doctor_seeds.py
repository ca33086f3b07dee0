"""The seed failures: `compat doctor` finds each from a matching environment (a fake
interpreter), declared hardware, an accelerate config and a script; the fixed versions clear it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.judge.checks import OWNED_IDS
from tests.support.fakeenv import make_env

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"
runner = CliRunner()

CASES = {
    # id: (packages broken, packages fixed, gpus, launcher, accelerate config, script)
    "device-map-auto-silent-tensor-parallel": (
        {"transformers": "4.51.3", "torch": "2.6.0", "accelerate": "1.6.0", "trl": "0.17.0"},
        {"transformers": "4.54.0", "torch": "2.6.0", "accelerate": "1.6.0", "trl": "0.17.0"},
        "2xH100", "accelerate", "accelerate_multi_gpu.yaml", "grpo_device_map_auto.py"),
    "grpo-vllm-device-mismatch": (
        {"trl": "0.15.0", "vllm": "0.7.0", "torch": "2.5.1"},
        {"trl": "0.15.0", "vllm": "0.7.2", "torch": "2.5.1"},
        "2xA100", "accelerate", "accelerate_zero3.yaml", "grpo_vllm.py"),
    "synced-gpus-nocache-rope": (
        {"trl": "0.15.2", "transformers": "4.48.3", "torch": "2.5.1", "deepspeed": "0.16.3"},
        None,  # no version fixes it: see test_rope_is_not_fixed_by_vllm_but_by_zero2_or_vllm_generation
        "2xA100", "accelerate", "accelerate_zero3.yaml", "grpo_hf_generate.py"),
    "grpo-fsdp-ref-model-on-cpu": (
        {"trl": "0.16.1", "transformers": "4.51.3", "torch": "2.6.0", "accelerate": "1.6.0"},
        {"trl": "0.18.0", "transformers": "4.51.3", "torch": "2.6.0", "accelerate": "1.6.0"},
        "2xA100", "accelerate", "accelerate_fsdp.yaml", "grpo_fsdp.py"),
    "online-dpo-dataparallel-config": (
        {"trl": "0.16.1", "transformers": "4.51.3", "torch": "2.6.0"},
        {"trl": "0.17.0", "transformers": "4.51.3", "torch": "2.6.0"},
        "2xA100", "python", None, "online_dpo.py"),
    "deepspeed-elastic-agent-log-import": (
        {"deepspeed": "0.14.0", "torch": "2.4.0", "transformers": "4.44.2"},
        {"deepspeed": "0.14.1", "torch": "2.4.0", "transformers": "4.44.2"},
        "2xA100", "python", None, "online_dpo.py"),
    "torch-get-default-device-missing": (
        {"transformers": "4.52.4", "torch": "2.2.2", "accelerate": "1.7.0"},
        {"transformers": "4.52.4", "torch": "2.3.1", "accelerate": "1.7.0"},
        "1xA100", "python", None, "online_dpo.py"),
    "httpx-028-proxies-removed": (
        {"openai": "1.54.4", "httpx": "0.28.0", "torch": "2.6.0"},
        {"openai": "1.55.3", "httpx": "0.28.0", "torch": "2.6.0"},
        "1xA100", "python", None, "online_dpo.py"),
}


@pytest.fixture(scope="module")
def doctor(tmp_path_factory):
    envs: dict[tuple, str] = {}

    def run(packages: dict[str, str], gpus: str, launcher: str, config: str | None, script: str) -> dict:
        key = tuple(sorted(packages.items()))
        if key not in envs:
            envs[key] = str(make_env(tmp_path_factory.mktemp("env"), packages, deps=False))
        args = ["doctor", "--json", "--python", envs[key], "--gpus", gpus, "--driver", "550.54.15",
                "--launcher", launcher, "--script", str(SCRIPTS / script)]
        if config:
            args += ["--accelerate-config", str(SCRIPTS / config)]
        result = runner.invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return json.loads(result.stdout)

    return run


def _found(report: dict) -> set[str]:
    return {f["id"] for f in report["findings"] if f["status"] == "found"}


@pytest.mark.parametrize("sid", sorted(CASES))
def test_seed_failure_found_and_cleared(doctor, sid):
    broken, fixed, gpus, launcher, config, script = CASES[sid]
    assert sid in _found(doctor(broken, gpus, launcher, config, script))
    if fixed is not None:
        assert sid not in _found(doctor(fixed, gpus, launcher, config, script))


def test_rope_is_not_fixed_by_vllm_but_by_zero2_or_vllm_generation(doctor):
    broken, _, gpus, launcher, config, script = CASES["synced-gpus-nocache-rope"]
    with_vllm = {**broken, "vllm": "0.7.2"}
    assert "synced-gpus-nocache-rope" in _found(doctor(with_vllm, gpus, launcher, config, script))
    assert "synced-gpus-nocache-rope" not in _found(doctor(broken, gpus, launcher, "accelerate_zero2.yaml", script))
    assert "synced-gpus-nocache-rope" not in _found(doctor(broken, gpus, launcher, config, "grpo_vllm.py"))


def test_transformers_5_6_with_a_peft_before_0_19_is_a_warning_and_0_19_clears_it(doctor):
    base = {"transformers": "5.10.2", "torch": "2.11.0", "accelerate": "1.15.0"}
    found = doctor({**base, "peft": "0.18.1"}, "1xH100", "python", None, "online_dpo.py")
    (finding,) = [f for f in found["findings"] if f["id"] == "transformers-load-adapter-needs-peft-019"]
    assert finding["status"] == "found" and finding["severity"] == "warning"
    assert "transformers-load-adapter-needs-peft-019" not in _found(doctor({**base, "peft": "0.19.1"}, "1xH100", "python",
                                                                           None, "online_dpo.py"))


def test_a_healthy_modern_stack_triggers_no_signature(doctor):
    sigs = {p.stem for p in (Path(__file__).resolve().parents[2] / "tests" / "data" / "logs").glob("*.log")}
    report = doctor({"trl": "1.16.0", "vllm": "0.31.0", "torch": "2.13.0", "transformers": "5.23.0",
                     "accelerate": "1.15.0", "deepspeed": "0.18.2", "peft": "0.19.1"},
                    "8xH100", "accelerate", "accelerate_zero3.yaml", "grpo_vllm.py")
    # The built-in checks decide their own entries from the facts (driver 550 does not run torch
    # 2.13.0's cu130 build: cuda-driver-too-old), not from a `when` clause.
    assert not (_found(report) & sigs) - OWNED_IDS
