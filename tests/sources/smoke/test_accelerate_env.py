"""Under torchrun, the user's accelerate config reaches the ranks: accelerate's own launch code turns it into the
variables `Accelerator()` reads (compat/sources/smoke/accelerate_env.py), in the judged interpreter."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from compat.model.facts import AccelerateConfig, Launcher
from compat.model.smoke import Stage, StagePlan, Status
from compat.smoke.launch import train_launch
from compat.smoke.parse import stage_result
from compat.sources.smoke.accelerate_env import accelerate_environment
from compat.sources.smoke.run import ACCELERATE_ENV, CHILD, child_env, commands, run_child, scratch
from tests.support.paths import DATA

accelerate = pytest.mark.skipif(importlib.util.find_spec("accelerate") is None,
                                reason="accelerate is not installed (the default Python's test extra has it)")


def _user_config(path: Path, kind: str, **settings: object) -> AccelerateConfig:
    """A config file as `accelerate config` writes it, and the record the probe reads of it."""
    lines = {"compute_environment": "LOCAL_MACHINE", "distributed_type": kind, "num_machines": 1, "num_processes": 2,
             "machine_rank": 0, "use_cpu": False, **settings}
    path.write_text("".join(f"{k}: {v}\n" for k, v in lines.items()), encoding="utf-8")
    return AccelerateConfig(path=str(path), distributed_type=kind, num_processes=2,
                            mixed_precision=str(settings.get("mixed_precision", "no")), fsdp_version=None,
                            zero_stage=None)


def test_under_torchrun_each_rank_first_takes_the_configs_variables(tmp_path):
    config = _user_config(tmp_path / "c.yaml", "MULTI_GPU", mixed_precision="bf16")
    launch = train_launch(config=config, deepspeed=None, processes=2, cpu=True, launcher=Launcher.TORCHRUN)
    assert launch.arguments == ("--standalone", "--nproc_per_node=2")
    # the arguments `accelerate launch` would get, with a CPU machine's replacements, said as for accelerate's run
    assert launch.accelerate_arguments == ("--config_file", str(tmp_path / "c.yaml"), "--multi_gpu",
                                           "--mixed_precision=no", "--num_processes=2")
    assert launch.not_exercised == ("mixed precision bf16: a CPU machine runs the steps in full precision",)
    label, argv = commands("/venv/bin/python", StagePlan(stage=Stage.TRAIN, args=("sft",), processes=2, launch=launch))[1]
    assert argv == ["/venv/bin/python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                    str(ACCELERATE_ENV), *launch.accelerate_arguments, "--", "train", "sft", "--launched",
                    "--launcher=torchrun"]
    assert label.startswith("torchrun --standalone --nproc_per_node=2 accelerate_env.py --config_file ")
    plain = train_launch(config=None, deepspeed=None, processes=2, cpu=True, launcher=Launcher.TORCHRUN)
    assert commands("/venv/bin/python", StagePlan(stage=Stage.TRAIN, args=("sft",), processes=2,
                                                  launch=plain))[1][1][5] == str(CHILD)


@accelerate
@pytest.mark.needs_torch
def test_accelerates_own_code_turns_a_gpu_fsdp_config_into_its_variables():
    # The GPU machine's arguments (nothing replaced), computed here: only the variables, no process starts.
    fsdp = str(DATA / "accelerate" / "fsdp2.yaml")
    env = accelerate_environment(["--config_file", fsdp, "--num_processes=8"], {})
    assert env["ACCELERATE_USE_FSDP"] == "true" and env["FSDP_VERSION"] == "2"
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16" and env["FSDP_STATE_DICT_TYPE"] == "SHARDED_STATE_DICT"
    assert "MASTER_PORT" not in env and "RANK" not in env  # torchrun's rendezvous stays torchrun's


@accelerate
@pytest.mark.needs_torch
def test_a_deepspeed_config_gives_deepspeeds_variables_and_a_cpu_launch_gives_none(tmp_path):
    zero3 = str(DATA / "accelerate" / "zero3.yaml")
    env = accelerate_environment(["--config_file", zero3, "--num_processes=8"], {})
    assert env["ACCELERATE_USE_DEEPSPEED"] == "true" and env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] == "3"
    assert env["ACCELERATE_MIXED_PRECISION"] == "bf16"
    cpu = accelerate_environment(["--config_file", zero3, "--multi_gpu", "--mixed_precision=no", "--num_processes=2"],
                                 {"ACCELERATE_DEBUG_MODE": "true"})
    assert "ACCELERATE_USE_DEEPSPEED" not in cpu and cpu["ACCELERATE_MIXED_PRECISION"] == "no"
    assert "ACCELERATE_DEBUG_MODE" not in cpu  # what the rank already has is not listed again


@pytest.mark.slow  # two torchrun ranks that each import torch, accelerate and trl twice and train two steps
@accelerate
@pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="trl is not installed")
def test_a_setting_of_the_config_reaches_the_trainers_accelerator_under_torchrun(tmp_path):
    config = _user_config(tmp_path / "debug.yaml", "MULTI_GPU", debug="true", mixed_precision="bf16")
    launch = train_launch(config=config, deepspeed=None, processes=2, cpu=True, launcher=Launcher.TORCHRUN)
    label, argv = commands(sys.executable, StagePlan(stage=Stage.TRAIN, args=("sft",), processes=2, launch=launch))[1]
    with scratch() as root:  # the launched run alone, as compat runs it (recorded the same way: train-torchrun-cpu)
        launched = run_child(label, argv, cwd=root / "train-1", env=child_env(dict(os.environ), root), timeout=600)
    result = stage_result(Stage.TRAIN, (launched,))
    assert result.status is Status.PASS, (launched.stdout[-2000:], launched.stderr[-3000:])
    steps = {s.name: s.detail or "" for s in result.steps}
    assert "ACCELERATE_DEBUG_MODE=true" in steps["torchrun x2: accelerate config"]
    assert "ACCELERATE_MIXED_PRECISION=no" in steps["torchrun x2: accelerate config"]
    # debug: true in the file, seen by the Trainer's accelerator in each rank; bf16 replaced on CPU, said above
    assert steps["torchrun x2: sft"].endswith(", 2 processes, MULTI_CPU, debug mode")
