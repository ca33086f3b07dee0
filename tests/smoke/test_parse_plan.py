"""compat smoke's pure half: the plan from facts, and each stage's result from recorded child output."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.model.facts import Distribution, Hardware, HardwareSource, Script
from compat.model.smoke import ChildOutput, Stage, Status
from compat.smoke.parse import failure_output, parse_steps, stage_result
from compat.smoke.plan import only_stages, parse_stages, parse_trainers, plan_stages
from tests.golden.inputs import h100_box

DATA = Path(__file__).parent.parent / "data" / "smoke"


def _child(name: str, *, returncode: int | None = 0, timed_out: bool = False) -> ChildOutput:
    stdout = (DATA / f"{name}.stdout").read_text(encoding="utf-8")
    err = DATA / f"{name}.stderr"
    return ChildOutput(command=f"python child.py {name}", returncode=returncode, stdout=stdout,
                       stderr=err.read_text(encoding="utf-8") if err.is_file() else "", seconds=12.5, timed_out=timed_out)


def test_recorded_cpu_training_passes_with_every_trainer_and_lora():
    result = stage_result(Stage.TRAIN, (_child("train-cpu"),))
    assert result.status is Status.PASS
    assert [s.name for s in result.steps] == ["tiny model", "import trl", "sft", "dpo", "grpo", "save and reload (sft)",
                                              "sft+lora"]
    assert result.output is None and result.reason is None


def test_recorded_old_accelerate_fails_train_at_sft_with_the_traceback_kept():
    result = stage_result(Stage.TRAIN, (_child("train-accelerate-too-old", returncode=1),))
    assert result.status is Status.FAIL
    assert result.reason == "failed: sft"
    sft = next(s for s in result.steps if s.name == "sft")
    assert sft.detail is not None and "accelerate>=1.1.0" in sft.detail
    assert result.output is not None and "ImportError" in result.output and "@@compat-smoke" not in result.output


def test_gpu_stages_read_from_their_step_lines():
    device = stage_result(Stage.DEVICE, (_child("device-h100"),))
    assert device.status is Status.PASS
    assert {s.name: s.status for s in device.steps}["peer access"] is Status.SKIPPED
    assert stage_result(Stage.COLLECTIVE, (_child("collective-nccl"),)).steps[0].name == "all-reduce nccl x8"
    serve = stage_result(Stage.SERVE, (_child("serve-vllm"),))
    assert serve.status is Status.PASS and [s.name for s in serve.steps][-1] == "sleep and wake"


def test_a_gpu_the_torch_build_lacks_fails_the_device_stage():
    result = stage_result(Stage.DEVICE, (_child("device-rtx5090-old-torch", returncode=1),))
    assert result.status is Status.FAIL
    assert result.reason == "failed: compiled architectures cuda:0, matmul fp32 cuda:0"
    assert "no kernel image is available" in failure_output((_child("device-rtx5090-old-torch", returncode=1),))


def test_a_child_killed_at_its_bound_or_crashing_fails_the_stage():
    hung = ChildOutput(command="python child.py serve", returncode=None, stdout="", stderr="", seconds=300.0,
                       timed_out=True)
    result = stage_result(Stage.SERVE, (hung,))
    assert result.status is Status.FAIL and "ran past its time bound (300 s)" in (result.reason or "")
    crashed = ChildOutput(command="python child.py kernels", returncode=-11, stdout="", stderr="Segmentation fault",
                          seconds=1.0)
    assert "killed by SIGSEGV" in (stage_result(Stage.KERNELS, (crashed,)).reason or "")
    missing = ChildOutput(command="python child.py import", returncode=None, stdout="", stderr="", seconds=0.0,
                          error="cannot run /nowhere/python: No such file or directory")
    assert stage_result(Stage.IMPORT, (missing,)).reason == "cannot run /nowhere/python: No such file or directory"


def test_all_steps_skipped_is_a_skipped_stage_and_a_bad_line_a_failure():
    line = '@@compat-smoke {"detail": "torch.cuda.is_available() is False", "name": "cuda", "seconds": 0, "status": "skipped"}'
    result = stage_result(Stage.DEVICE, (ChildOutput(command="c", returncode=0, stdout=line, stderr="", seconds=1.0),))
    assert result.status is Status.SKIPPED and result.reason == "torch.cuda.is_available() is False"
    assert parse_steps("@@compat-smoke {not json")[0].status is Status.FAIL


def test_plan_on_a_gpu_box_runs_every_stage_with_nccl_ranks_per_gpu():
    plans = {p.stage: p for p in plan_stages(h100_box())}
    assert all(p.skip is None for p in plans.values())
    assert plans[Stage.COLLECTIVE].processes == 8
    assert "vllm=vllm" in plans[Stage.IMPORT].args and "ext:vllm=vllm._C" in plans[Stage.IMPORT].args
    assert plans[Stage.TRAIN].args[0] == "grpo"  # the box's script uses GRPOTrainer


def test_plan_on_a_cpu_box_skips_gpu_stages_with_the_reason():
    facts = dataclasses.replace(h100_box(), hardware=Hardware(source=HardwareSource.NVML, driver=None, driver_cuda=None,
                                                                  gpus=(), links=()))
    plans = {p.stage: p for p in plan_stages(facts, trainers=("dpo", "grpo"), processes=1)}
    assert plans[Stage.DEVICE].skip == "no GPU visible: a CPU machine has no CUDA device to initialise"
    assert plans[Stage.SERVE].skip is not None and plans[Stage.COLLECTIVE].processes == 2
    assert plans[Stage.TRAIN].args[:2] == ("dpo", "grpo") and plans[Stage.TRAIN].processes == 1


def test_trainers_come_from_the_script_and_without_trl_train_is_skipped():
    facts = dataclasses.replace(h100_box(), script=None)
    assert next(p for p in plan_stages(facts) if p.stage is Stage.TRAIN).args[0] == "sft"
    script = Script(path="train.py", trainers=("DPOTrainer", "GRPOTrainer"), device_maps=(), use_vllm=None, vllm_mode=None,
                    config_access=False, gradient_checkpointing=None, use_cache=None)
    with_script = dataclasses.replace(facts, script=script)
    assert next(p for p in plan_stages(with_script) if p.stage is Stage.TRAIN).args[:2] == ("dpo", "grpo")
    assert isinstance(facts.packages, tuple)
    no_trl = dataclasses.replace(facts, packages=tuple(d for d in facts.packages if d.name != "trl"))
    assert next(p for p in plan_stages(no_trl) if p.stage is Stage.TRAIN).skip == "trl is not installed"
    assert isinstance(no_trl.packages, tuple) and not any(isinstance(d, Distribution) and d.name == "trl"
                                                          for d in no_trl.packages)


def test_trainer_names_are_checked():
    assert parse_trainers("SFT, dpo,sft") == ("sft", "dpo")
    with pytest.raises(UsageError, match="--trainer takes sft, dpo, grpo"):
        parse_trainers("ppo")


def test_stages_not_chosen_are_skipped_saying_so_and_the_others_keep_their_plan():
    assert parse_stages("Train, import,train") == (Stage.IMPORT, Stage.TRAIN)  # in the order they run
    for bad in ("compile", "", "import,,x"):
        with pytest.raises(UsageError, match="--stages takes import, device, collective, kernels, serve, train"):
            parse_stages(bad)
    everything = plan_stages(h100_box())
    assert only_stages(everything, ()) == everything
    chosen = {p.stage: p for p in only_stages(everything, (Stage.IMPORT, Stage.TRAIN))}
    assert [s for s, p in chosen.items() if p.skip is None] == [Stage.IMPORT, Stage.TRAIN]
    assert chosen[Stage.COLLECTIVE].skip == "not chosen (--stages import,train)"
    assert chosen[Stage.TRAIN] == next(p for p in everything if p.stage is Stage.TRAIN)


def test_recorded_online_dpo_runs_two_steps_and_is_runnable():
    result = stage_result(Stage.TRAIN, (_child("train-online-dpo-cpu"),))
    assert result.status is Status.PASS
    assert [s.name for s in result.steps][2:] == ["online-dpo", "save and reload (online-dpo)"]
    assert result.steps[2].detail == "2 steps, loss 0.693"
    train = next(p for p in plan_stages(h100_box(), trainers=("online-dpo",)) if p.stage is Stage.TRAIN)
    assert train.args[0] == "online-dpo"


def test_a_trl_without_online_dpo_skips_it_with_the_reason(monkeypatch):
    import sys
    import types

    from compat.sources.smoke import child

    monkeypatch.setitem(sys.modules, "trl", types.ModuleType("trl"))
    monkeypatch.setitem(sys.modules, "trl.experimental", None)  # import of it raises ImportError
    monkeypatch.setattr(child, "_version", lambda dist: "0.8.6")
    with pytest.raises(child.Skip, match=r"trl 0\.8\.6 has no OnlineDPOTrainer"):
        child._online_dpo_classes()


def test_serve_runs_three_children_engine_server_and_colocate():
    from compat.sources.smoke.run import commands

    serve = next(p for p in plan_stages(h100_box()) if p.stage is Stage.SERVE)
    assert serve.args == ("engine", "server", "colocate") and serve.seconds == 600.0
    assert [label for label, _ in commands("/venv/bin/python", serve)] == [
        "python child.py serve engine", "python child.py serve server", "python child.py serve colocate"]
    children = (_child("serve-vllm"), _child("serve-server"), _child("serve-colocate"))
    result = stage_result(Stage.SERVE, children)
    assert result.status is Status.PASS
    assert [s.name for s in result.steps if not s.name.endswith("tiny model")] == [
        "vllm engine", "generation 1", "generation 2", "sleep and wake", "trl vllm-serve + VLLMClient",
        "grpo vllm colocate"]


def test_a_trl_server_that_exits_fails_serve_with_its_last_lines_for_explain():
    children = (_child("serve-vllm"), _child("serve-server-exits", returncode=1), _child("serve-colocate"))
    result = stage_result(Stage.SERVE, children)
    assert result.status is Status.FAIL and result.reason == "failed: trl vllm-serve + VLLMClient"
    assert "Bfloat16 is only supported on GPUs with compute capability of at least 8.0" in (result.output or "")
    assert "INFO" not in (result.output or "")  # only the failing child's output goes to explain


def test_a_trl_without_vllm_client_skips_server_mode_with_the_reason(monkeypatch):
    import sys
    import types

    from compat.sources.smoke import child

    monkeypatch.setitem(sys.modules, "trl", types.ModuleType("trl"))
    monkeypatch.setitem(sys.modules, "trl.generation", None)
    monkeypatch.setitem(sys.modules, "trl.generation.vllm_client", None)
    monkeypatch.setitem(sys.modules, "trl.extras", None)
    monkeypatch.setitem(sys.modules, "trl.extras.vllm_client", None)
    monkeypatch.setattr(child, "_version", lambda dist: "0.16.0")
    with pytest.raises(child.Skip, match=r"trl 0\.16\.0 has no VLLMClient \(server mode came in trl 0\.17\)"):
        child._vllm_client()


def test_the_servers_own_error_is_what_explain_names():
    from compat.api.stack import _smoke_diagnosis
    from compat.matrix import load_matrix

    output = failure_output((_child("serve-server-exits", returncode=1),))
    found = _smoke_diagnosis(output, h100_box(), load_matrix(()))
    assert found is not None and found.cause_id == "vllm-bf16-needs-sm80"


def test_compats_own_process_count_is_cut_to_the_gpus_visible_and_said():
    box = h100_box()
    box = dataclasses.replace(box, packages=(*box.packages, Distribution(name="accelerate", version="1.15.0", requires=())))
    one_gpu = dataclasses.replace(box, hardware=dataclasses.replace(box.hardware, gpus=box.hardware.gpus[:1], links=()))
    train = next(p for p in plan_stages(one_gpu, trainers=("sft",)) if p.stage is Stage.TRAIN)
    assert train.launch is not None and train.launch.processes == 1 and "--multi_gpu" not in train.launch.arguments
    assert train.launch.not_exercised[0] == "2 processes: 1 GPU visible, so the launched run has 1"
    eight = next(p for p in plan_stages(box, trainers=("sft",)) if p.stage is Stage.TRAIN)
    assert eight.launch is not None and eight.launch.processes == 2 and not any(
        "visible" in n for n in eight.launch.not_exercised)
