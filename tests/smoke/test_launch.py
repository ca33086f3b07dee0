"""The train stage's launched run from the user's accelerate config or DeepSpeed file, and what a CPU machine skips."""

from __future__ import annotations

import dataclasses

from compat.model.facts import AccelerateConfig, Distribution, Launcher
from compat.model.smoke import ChildOutput, SmokeReport, Stage, StagePlan, StageResult, Status, TrainLaunch
from compat.report.smoke import render_junit, render_markdown, render_text
from compat.smoke.launch import train_launch
from compat.smoke.plan import plan_stages
from compat.sources.smoke.run import CHILD, commands
from tests.golden.inputs import h100_box


def _config(kind: str, *, processes: int | None = 2, precision: str | None = "bf16", zero: int | None = None,
            fsdp: int | None = None) -> AccelerateConfig:
    return AccelerateConfig(path="/cfg/launch.yaml", distributed_type=kind, num_processes=processes,
                            mixed_precision=precision, fsdp_version=fsdp, zero_stage=zero)


def test_without_settings_the_launch_is_the_plain_two_process_run():
    launch = train_launch(config=None, deepspeed=None, processes=2, cpu=True)
    assert launch.arguments == ("--multi_gpu", "--mixed_precision=no", "--num_machines=1", "--dynamo_backend=no",
                                "--num_processes=2")
    assert launch.runs and launch.distributed is None and launch.not_exercised == ()
    assert not train_launch(config=None, deepspeed=None, processes=1, cpu=True).runs


def test_the_config_gives_the_process_count_and_fsdp_runs_on_gpus_as_written():
    launch = train_launch(config=_config("FSDP", processes=4, precision="bf16", fsdp=2), deepspeed=None, processes=2,
                          cpu=False)
    assert launch.arguments == ("--config_file", "/cfg/launch.yaml", "--num_processes=4")
    assert launch.processes == 4 and launch.distributed == "FSDP" and launch.not_exercised == ()


def test_fsdp_on_cpu_is_replaced_by_the_plain_run_and_said():
    launch = train_launch(config=_config("FSDP", precision="no", fsdp=2), deepspeed=None, processes=2, cpu=True)
    assert launch.distributed is None
    assert launch.arguments == ("--config_file", "/cfg/launch.yaml", "--multi_gpu", "--num_processes=2")
    assert launch.not_exercised == ("FSDP version 2 (/cfg/launch.yaml): the Trainer shards with FSDP on CUDA devices "
                                    "only, so the launched run is accelerate's plain multi-process run",)


def test_deepspeed_on_cpu_is_replaced_by_the_plain_run_and_said():
    launch = train_launch(config=_config("DEEPSPEED", zero=3), deepspeed=None, processes=2, cpu=True)
    assert launch.distributed is None and launch.deepspeed is None
    assert launch.arguments == ("--config_file", "/cfg/launch.yaml", "--multi_gpu", "--mixed_precision=no",
                                "--num_processes=2")
    assert launch.not_exercised == (
        "DeepSpeed ZeRO stage 3 (/cfg/launch.yaml): DeepSpeed's engine needs CUDA, so the launched run is "
        "accelerate's plain multi-process run",
        "mixed precision bf16: a CPU machine runs the steps in full precision",
    )


def test_a_deepspeed_file_on_a_gpu_machine_is_passed_to_accelerate():
    launch = train_launch(config=None, deepspeed="/cfg/ds.json", processes=8, cpu=False)
    assert launch.distributed == "DEEPSPEED"
    assert launch.arguments == ("--use_deepspeed", "--deepspeed_config_file", "/cfg/ds.json", "--mixed_precision=no",
                                "--num_machines=1", "--dynamo_backend=no", "--num_processes=8")
    gpu = train_launch(config=_config("MULTI_GPU", processes=8), deepspeed=None, processes=2, cpu=False)
    assert gpu.arguments == ("--config_file", "/cfg/launch.yaml", "--multi_gpu", "--num_processes=8")


def test_a_one_process_config_without_sharding_has_no_launched_run_and_says_so():
    launch = train_launch(config=_config("NO", processes=1, precision="no"), deepspeed=None, processes=2, cpu=True)
    assert not launch.runs
    assert launch.not_exercised == ("/cfg/launch.yaml starts one process: no launched run",)


def test_the_plan_carries_the_launch_and_the_child_is_told_what_sharding_to_check():
    box = h100_box()
    assert isinstance(box.packages, tuple)
    gpus = dataclasses.replace(box, packages=(*box.packages, Distribution(name="accelerate", version="1.15.0", requires=())))
    train = next(p for p in plan_stages(gpus, trainers=("sft",), accelerate=_config("FSDP", fsdp=2, precision="no"))
                 if p.stage is Stage.TRAIN)
    assert train.launch is not None and train.processes == 2
    label, argv = commands("/venv/bin/python", train)[1]
    assert argv[1:5] == ["-m", "accelerate.commands.launch", "--config_file", "/cfg/launch.yaml"]
    assert argv[-4:] == ["train", "sft", "--launched", "--distributed=FSDP"]
    assert label == ("accelerate launch --config_file /cfg/launch.yaml --num_processes=2 child.py train sft --launched "
                     "--distributed=FSDP")


def _report(launch: TrainLaunch) -> SmokeReport:
    stage = StageResult(stage=Stage.TRAIN, status=Status.PASS, seconds=30.0, launch=launch)
    return SmokeReport(python="/venv/bin/python", stages=(stage,), budget_s=900.0, seconds=31.0, trainers=("sft",))


def test_the_report_names_the_launcher_the_config_and_what_was_not_exercised():
    launch = train_launch(config=_config("DEEPSPEED", zero=2), deepspeed=None, processes=2, cpu=True)
    text = render_text(_report(launch))
    assert "        launch: accelerate launch --config_file /cfg/launch.yaml --multi_gpu" in text
    assert "        not exercised: DeepSpeed ZeRO stage 2 (/cfg/launch.yaml): DeepSpeed's engine needs CUDA" in text
    assert "train's launched run:" in render_markdown(_report(launch))
    assert "<system-out>launch: accelerate launch --config_file" in render_junit(_report(launch))
    default = train_launch(config=None, deepspeed=None, processes=2, cpu=True)
    assert "launch:" not in render_text(_report(default))


def test_a_child_that_ran_other_sharding_than_asked_fails_the_stage():
    line = ('@@compat-smoke {"detail": "RuntimeError: accelerate ran MULTI_GPU, the launch config asked for FSDP", '
            '"name": "accelerate launch x2: sft", "seconds": 2.0, "status": "fail"}')
    from compat.smoke.parse import stage_result

    result = stage_result(Stage.TRAIN, (ChildOutput(command="accelerate launch", returncode=1, stdout=line, stderr="",
                                                    seconds=9.0),))
    assert result.status is Status.FAIL and result.reason == "failed: accelerate launch x2: sft"


def test_recorded_cpu_run_under_a_user_fsdp_config_ran_two_unsharded_ranks():
    from pathlib import Path

    from compat.smoke.parse import stage_result

    stdout = (Path(__file__).parent.parent / "data" / "smoke" / "train-launched-fsdp-config-cpu.stdout").read_text()
    result = stage_result(Stage.TRAIN, (ChildOutput(command="accelerate launch", returncode=0, stdout=stdout, stderr="",
                                                    seconds=30.0),))
    assert result.status is Status.PASS
    assert result.steps[-1].detail == "2 steps, loss 3.553, 2 processes, MULTI_CPU"


def test_under_torchrun_the_launched_run_is_torchruns_own_and_the_child_is_told():
    launch = train_launch(config=None, deepspeed=None, processes=2, cpu=True, launcher=Launcher.TORCHRUN)
    assert launch.launcher == "torchrun" and launch.runs and launch.not_exercised == ()
    assert launch.arguments == ("--standalone", "--nproc_per_node=2")
    label, argv = commands("/venv/bin/python", StagePlan(stage=Stage.TRAIN, args=("dpo", "sft"), processes=2,
                                                         launch=launch))[1]
    assert argv == ["/venv/bin/python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(CHILD),
                    "train", "dpo", "--launched", "--launcher=torchrun"]
    assert label == "torchrun --standalone --nproc_per_node=2 child.py train dpo --launched --launcher=torchrun"
    assert "launch: torchrun --standalone --nproc_per_node=2" in render_text(_report(launch))


def test_under_torchrun_the_users_settings_are_accelerates_arguments_for_the_ranks_variables():
    launch = train_launch(config=_config("FSDP", processes=4, fsdp=2), deepspeed="/cfg/ds.json", processes=2, cpu=False,
                          launcher=Launcher.TORCHRUN)
    assert launch.arguments == ("--standalone", "--nproc_per_node=4") and launch.distributed == "DEEPSPEED"
    assert launch.accelerate_arguments == ("--config_file", "/cfg/launch.yaml", "--use_deepspeed",
                                           "--deepspeed_config_file", "/cfg/ds.json", "--num_processes=4")
    assert launch.not_exercised == () and launch.deepspeed == "/cfg/ds.json"
    text = render_text(_report(launch))
    assert "launch: torchrun --standalone --nproc_per_node=4 (DEEPSPEED)" in text
    assert "each rank takes the variables of: accelerate launch --config_file /cfg/launch.yaml --use_deepspeed" in text
    # on a CPU machine the same replacements as accelerate's run, said the same way
    cpu = train_launch(config=_config("FSDP", processes=4, fsdp=2), deepspeed=None, processes=2, cpu=True,
                       launcher=Launcher.TORCHRUN)
    assert cpu.distributed is None and cpu.accelerate_arguments[-3:] == ("--multi_gpu", "--mixed_precision=no",
                                                                         "--num_processes=4")
    assert cpu.not_exercised[0].startswith("FSDP version 2 (/cfg/launch.yaml): the Trainer shards with FSDP on CUDA")
    one = train_launch(config=_config("NO", processes=1, precision="no"), deepspeed=None, processes=2, cpu=True,
                       launcher=Launcher.TORCHRUN)
    assert not one.runs and one.not_exercised == ("/cfg/launch.yaml starts one process: no launched run",)
    assert not train_launch(config=None, deepspeed=None, processes=1, cpu=True, launcher=Launcher.TORCHRUN).runs


def test_deepspeed_and_srun_launchers_are_not_run_and_accelerates_run_is_used_instead():
    for launcher, why in ((Launcher.DEEPSPEED, "the deepspeed launcher: it starts its ranks through pdsh and "
                           "DeepSpeed's engine needs CUDA, so smoke does not run it; the launched run is accelerate's"),
                          (Launcher.SRUN, "srun: smoke does not start an srun step of its own (it needs a Slurm "
                           "allocation, and inside a step the tasks are already placed), so the launched run is "
                           "accelerate's")):
        launch = train_launch(config=None, deepspeed=None, processes=2, cpu=True, launcher=launcher)
        assert launch.launcher == "accelerate launch" and launch.not_exercised == (why,)
        assert launch.arguments == train_launch(config=None, deepspeed=None, processes=2, cpu=True).arguments
        assert f"not exercised: {why}" in render_text(_report(launch))
    for plain in (None, Launcher.ACCELERATE, Launcher.PYTHON):
        assert train_launch(config=None, deepspeed=None, processes=2, cpu=True, launcher=plain).default


def test_the_plan_takes_the_launcher():
    box = h100_box()
    assert isinstance(box.packages, tuple)
    gpus = dataclasses.replace(box, packages=(*box.packages, Distribution(name="accelerate", version="1.15.0", requires=())))
    train = next(p for p in plan_stages(gpus, trainers=("sft",), processes=4, launcher=Launcher.TORCHRUN)
                 if p.stage is Stage.TRAIN)
    assert train.launch is not None and train.launch.launcher == "torchrun" and train.processes == 4


def test_recorded_cpu_run_under_torchrun_passed_with_two_gloo_ranks():
    from pathlib import Path

    from compat.smoke.parse import stage_result

    stdout = (Path(__file__).parent.parent / "data" / "smoke" / "train-torchrun-cpu.stdout").read_text()
    result = stage_result(Stage.TRAIN, (ChildOutput(command="torchrun", returncode=0, stdout=stdout, stderr="",
                                                    seconds=30.0),))
    assert result.status is Status.PASS
    assert [s.name for s in result.steps] == ["torchrun x2: tiny model", "torchrun x2: import trl", "torchrun x2: sft"]
    assert result.steps[-1].detail.endswith(", 2 processes, MULTI_CPU")


def test_recorded_cpu_run_under_torchrun_with_a_user_config_took_accelerates_variables_in_each_rank():
    from pathlib import Path

    from compat.smoke.parse import stage_result

    stdout = (Path(__file__).parent.parent / "data" / "smoke" / "train-torchrun-config-cpu.stdout").read_text()
    result = stage_result(Stage.TRAIN, (ChildOutput(command="torchrun", returncode=0, stdout=stdout, stderr="",
                                                    seconds=65.0),))
    assert result.status is Status.PASS
    assert [s.name for s in result.steps] == ["torchrun x2: accelerate config", "torchrun x2: tiny model",
                                              "torchrun x2: import trl", "torchrun x2: sft"]
    assert "ACCELERATE_DEBUG_MODE=true" in (result.steps[0].detail or "")
    assert result.steps[-1].detail == "2 steps, loss 3.508, 2 processes, MULTI_CPU, debug mode"
