"""compat smoke's host side: the children's environment, their command lines, time bounds and the temp dir."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from compat.model.facts import Launcher
from compat.model.smoke import Stage, StagePlan, Status
from compat.smoke.launch import train_launch
from compat.smoke.parse import stage_result
from compat.sources.smoke.run import CHILD, child_env, commands, free_port, run_child, run_stage, scratch


def test_children_write_only_inside_the_temp_dir_and_download_nothing(tmp_path):
    env = child_env({"HOME": "/home/someone", "RANK": "3", "PATH": "/usr/bin", "HF_HOME": "/data/hf"}, tmp_path)
    for name in ("HOME", "HF_HOME", "XDG_CACHE_HOME", "TRITON_CACHE_DIR", "TMPDIR", "TORCHINDUCTOR_CACHE_DIR"):
        assert Path(env[name]).is_relative_to(tmp_path) and Path(env[name]).is_dir()
    assert env["HF_HUB_OFFLINE"] == env["TRANSFORMERS_OFFLINE"] == env["HF_DATASETS_OFFLINE"] == "1"
    assert env["WANDB_MODE"] == "disabled" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "RANK" not in env and env["PATH"] == "/usr/bin"
    # lock --verify's own venv: bytecode written once, read by the later children; the caller's setting is dropped too
    own = child_env({"PYTHONDONTWRITEBYTECODE": "1", "HOME": "/home/someone"}, tmp_path, bytecode=True)
    assert "PYTHONDONTWRITEBYTECODE" not in own and own["HF_HUB_OFFLINE"] == "1"


def test_collective_runs_under_torchrun_and_train_once_more_under_accelerate():
    (_label, argv), = commands("/venv/bin/python", StagePlan(stage=Stage.COLLECTIVE, processes=8))
    assert argv[:4] == ["/venv/bin/python", "-m", "torch.distributed.run", "--standalone"]
    assert "--nproc_per_node=8" in argv and argv[-2:] == [str(CHILD), "collective"]
    launch = train_launch(config=None, deepspeed=None, processes=2, cpu=True)
    runs = commands("/venv/bin/python", StagePlan(stage=Stage.TRAIN, args=("dpo", "sft", "--lora"), processes=2, launch=launch))
    assert runs[0][1] == ["/venv/bin/python", str(CHILD), "train", "dpo", "sft", "--lora"]
    assert runs[1][1][2:4] == ["accelerate.commands.launch", "--multi_gpu"]
    assert runs[1][1][-3:] == ["train", "dpo", "--launched"] and "--num_processes=2" in runs[1][1]
    assert not any(a.startswith("--main_process_port") for a in runs[1][1])
    one = train_launch(config=None, deepspeed=None, processes=1, cpu=True)
    assert len(commands("/venv/bin/python", StagePlan(stage=Stage.TRAIN, args=("sft",), processes=1, launch=one))) == 1


def test_accelerate_launch_is_given_the_port_it_rendezvouses_on_and_torchrun_finds_its_own():
    """accelerate's default port, 29500, is every run's: a smoke beside a job (or another smoke) must not share it."""
    launch = train_launch(config=None, deepspeed=None, processes=2, cpu=True)
    plan = StagePlan(stage=Stage.TRAIN, args=("sft",), processes=2, launch=launch)
    label, argv = commands("/venv/bin/python", plan, port=41234)[1]
    assert "--main_process_port=41234" in argv and argv.index("--main_process_port=41234") < argv.index(str(CHILD))
    assert "main_process_port" not in label  # the report shows the user's launch, not the port of one run
    torchrun = dataclasses.replace(launch, launcher=Launcher.TORCHRUN.value, arguments=("--standalone", "--nproc_per_node=2"))
    _, argv = commands("/venv/bin/python", dataclasses.replace(plan, launch=torchrun), port=41234)[1]
    assert "--standalone" in argv and not any(a.startswith("--main_process_port") for a in argv)
    assert 0 < free_port() < 65536


def test_a_child_past_its_bound_is_killed_and_a_missing_interpreter_reported(tmp_path):
    hung = run_child("sleep", [sys.executable, "-c", "import time; time.sleep(120)"], cwd=tmp_path / "a", env={},
                     timeout=0.5)
    assert hung.timed_out and hung.returncode is None
    missing = run_child("nothing", [str(tmp_path / "no-python")], cwd=tmp_path / "b", env={}, timeout=5)
    assert missing.error is not None and missing.error.startswith("cannot run")


def test_the_import_stage_of_this_interpreter_reports_each_module(tmp_path):
    import time

    plan = StagePlan(stage=Stage.IMPORT, args=("packaging=packaging", "ext:packaging=packaging.version",
                                                "no-such-dist=compat_no_such_module"))
    with scratch() as root:
        children = run_stage(sys.executable, plan, root=root, env=child_env({}, root), deadline=time.monotonic() + 120)
        kept = root
    assert not kept.exists()  # the temp dir is removed
    result = stage_result(Stage.IMPORT, children)
    statuses = {s.name: s.status for s in result.steps}
    assert statuses == {"import packaging": Status.PASS, "extension packaging.version": Status.PASS,
                        "import compat_no_such_module": Status.FAIL}
    assert result.status is Status.FAIL and "ModuleNotFoundError" in (result.output or "")


def test_a_killed_child_takes_its_own_session_leaders_with_it(tmp_path):
    # torchrun's ranks start sessions of their own; one left alive would hold the pipes open past the bound
    script = ("import subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    out = run_child("tree", [sys.executable, "-c", script], cwd=tmp_path, env={}, timeout=2)
    assert out.timed_out
    grandchild = int(out.stdout.split()[0])
    assert _all_end([grandchild])


def test_a_child_that_keeps_starting_session_leaders_leaves_none_behind(tmp_path):
    # A process that forks between the tree's reading and its kill would outlive it: the tree is stopped first.
    script = ("import subprocess, sys\n"
              "while True:\n"
              "    p = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
              "    print(p.pid, flush=True)\n")
    out = run_child("spawner", [sys.executable, "-c", script], cwd=tmp_path, env={}, timeout=1.5)
    assert out.timed_out
    pids = [int(p) for p in out.stdout.split()[:-1]]  # the last line may be cut by the kill
    assert pids
    assert _all_end(pids)


def _all_end(pids: list[int]) -> bool:
    """Whether every process ends (or is a zombie) within 10 s: a SIGKILL is only acted on once a loaded machine runs
    the process again."""
    import time

    deadline = time.monotonic() + 10
    while True:
        alive = [p for p in pids if _running(p)]
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
