"""doctor uses what compat knows beyond the installed metadata: the GPU table, the toolchain around
torch, the image's CUDA, Slurm, and catalog entries whose conditions the facts decide."""

from __future__ import annotations

import dataclasses

import pytest

from compat import api
from compat.judge.diagnose import diagnose
from compat.model.facts import Facts, Gpu, Hardware, HardwareSource, Launcher, Script, System, Tool
from compat.model.findings import Status
from compat.model.unknown import Unknown
from compat.sources.probe.launch import infer_launcher, kept_env
from compat.sources.probe.script import parse_script
from tests.api.test_api import refuse_probe, saved_facts, write_facts
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
CU124 = "2.5.1+cu124"


def _found(facts: Facts) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in diagnose(facts, MATRIX):
        if f.status is Status.FOUND:
            out.setdefault(f.id, []).append(f)
    return out


def _with(facts: Facts, *, env: dict[str, str] | None = None, tools: tuple[Tool, ...] | None = None,
          gpus: int = 0, driver: str = "550.54.15", launcher: Launcher | None = None) -> Facts:
    if env is not None or launcher is not None:
        launch = dataclasses.replace(facts.launch, env=env if env is not None else facts.launch.env,
                                     launcher=launcher or facts.launch.launcher)
        facts = dataclasses.replace(facts, launch=launch)
    if tools is not None:
        facts = dataclasses.replace(facts, system=System(os="Ubuntu 22.04", platform="Linux", cpu="x", tools=tools))
    if gpus:
        board = tuple(Gpu(index=i, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559,
                          bus_id=f"0000:{i:02x}:00.0") for i in range(gpus))
        facts = dataclasses.replace(facts, hardware=Hardware(
            source=HardwareSource.NVML, driver=driver, driver_cuda=MATRIX.cuda.max_cuda(driver), gpus=board, links=()))
    return facts


def test_an_a100_through_an_old_nvidia_smi_takes_its_compute_capability_from_the_gpu_table(tmp_path, monkeypatch):
    refuse_probe(monkeypatch)
    a100 = Gpu(index=0, name="NVIDIA A100-SXM4-80GB", compute_capability=Unknown(reason="nvidia-smi has no compute_cap"),
               memory_mib=81920, bus_id="00000000:07:00.0")
    facts = dataclasses.replace(saved_facts({"torch": CU124}, torch=CU124), hardware=Hardware(
        source=HardwareSource.NVIDIA_SMI, driver="470.82.01", driver_cuda="11.4", gpus=(a100,), links=()))
    result = api.doctor(api.DoctorRequest(environment=write_facts(tmp_path, facts)))
    assert result.facts.hardware.gpus[0].compute_capability == "8.0"
    assert not [f for f in result.findings if f.id == "gpu-arch-not-in-torch-build"]  # decided: sm_80 is in the build


@pytest.mark.parametrize(("nvcc", "fires"), [("11.8.89", True), ("12.1.105", False), (None, False)])
def test_deepspeed_jit_builds_need_nvcc_of_torchs_cuda_major(nvcc, fires):
    facts = _with(saved_facts({"torch": CU124, "deepspeed": "0.16.3"}, torch=CU124), tools=(Tool(name="nvcc", version=nvcc),))
    found = _found(facts)
    assert ("ds-cuda-version-mismatch-opbuild" in found) is fires
    if fires:
        assert "nvcc 11.8.89 on PATH" in [e.text for e in found["ds-cuda-version-mismatch-opbuild"][0].evidence]


def test_a_system_cuda_on_ld_library_path_shadows_the_wheels():
    packages = {"torch": CU124, "nvidia-cusparse-cu12": "12.3.1.170", "nvidia-nccl-cu12": "2.21.5"}
    base = saved_facts(packages, torch=CU124)
    shadowed = _found(_with(base, env={"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64:/usr/local/nvidia/lib64"}))
    (f,) = shadowed["system-cuda-on-ld-library-path"]
    assert "/usr/local/cuda-12.1/lib64" in f.cause and "/usr/local/nvidia" not in f.cause
    assert f.see == ("nvjitlink-cusparse-symbol", "nccl-version-mismatch")
    wheels_only = "/venv/lib/python3.11/site-packages/nvidia/cusparse/lib"
    assert "system-cuda-on-ld-library-path" not in _found(_with(base, env={"LD_LIBRARY_PATH": wheels_only}))


@pytest.mark.parametrize(("env", "driver", "fires"), [
    ({"CUDA_VERSION": "12.8.1"}, "550.54.15", True),  # R550 runs CUDA <= 12.4: the runtime refuses the image
    ({"CUDA_VERSION": "12.8.1"}, "570.124.06", False),
    ({"CUDA_VERSION": "12.8.1", "NVIDIA_DISABLE_REQUIRE": "1"}, "550.54.15", False),
])
def test_the_images_cuda_against_the_driver(env, driver, fires):
    facts = _with(saved_facts({"torch": CU124}, torch=CU124), env=env, gpus=1, driver=driver)
    found = _found(facts)
    assert ("container-cuda-newer-than-driver" in found) is fires
    if fires:
        assert found["container-cuda-newer-than-driver"][0].effect.value == "wont-start"


def test_the_images_cuda_with_a_declared_driver_in_a_build(tmp_path, monkeypatch):
    refuse_probe(monkeypatch)
    facts = _with(saved_facts({"torch": CU124}, torch=CU124), env={"CUDA_VERSION": "12.8.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8"})
    result = api.doctor(api.DoctorRequest(environment=write_facts(tmp_path, facts),
                                          declared=api.Declared(gpus="8xH100", driver="550.54.15")))
    assert result.failed and any(f.id == "container-cuda-newer-than-driver" for f in result.findings)


def test_srun_is_a_launcher_and_its_tasks_per_node_are_checked_against_the_nodes_gpus():
    assert infer_launcher({"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_PROCID": "3"}) is Launcher.SRUN
    assert isinstance(infer_launcher({"SLURM_JOB_ID": "7"}), Unknown)  # an salloc shell: no step yet
    assert kept_env({"SLURM_NTASKS_PER_NODE": "8", "SLURM_GPUS_ON_NODE": "4"}) == {
        "SLURM_GPUS_ON_NODE": "4", "SLURM_NTASKS_PER_NODE": "8"}
    base = saved_facts({"torch": CU124}, torch=CU124)
    # --gpus-per-task narrows CUDA_VISIBLE_DEVICES to one GPU per task: the node's GPUs count, not the task's
    ok = {"SLURM_NTASKS_PER_NODE": "4", "SLURM_GPUS_ON_NODE": "4", "CUDA_VISIBLE_DEVICES": "2"}
    assert "more-processes-than-gpus" not in _found(_with(base, env=ok, gpus=8, launcher=Launcher.SRUN))
    over = {"SLURM_NTASKS_PER_NODE": "8", "SLURM_GPUS_ON_NODE": "4"}
    (f,) = _found(_with(base, env=over, gpus=8, launcher=Launcher.SRUN))["more-processes-than-gpus"]
    assert f.title == "srun starts 8 processes for 4 GPUs" and "--ntasks-per-node" in f.fix.advice


def test_srun_is_accepted_on_the_command_line(tmp_path, monkeypatch):
    refuse_probe(monkeypatch)
    facts = saved_facts({"torch": CU124}, torch=CU124)
    result = api.doctor(api.DoctorRequest(environment=write_facts(tmp_path, facts),
                                          declared=api.Declared(gpus="8xH100", driver="550.54.15", launcher="srun")))
    assert result.facts.launch.launcher is Launcher.SRUN
    assert not [f for f in result.findings if f.id == "multi-gpu-without-launcher"]


def test_torchrun_world_size_against_the_visible_gpus():
    base = saved_facts({"torch": CU124}, torch=CU124)
    env = {"LOCAL_WORLD_SIZE": "8", "CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    (f,) = _found(_with(base, env=env, gpus=8, launcher=Launcher.TORCHRUN))["more-processes-than-gpus"]
    assert f.title == "torchrun starts 8 processes for 4 GPUs"


def test_cuda_visible_devices_naming_gpus_the_driver_does_not_have():
    base = saved_facts({"torch": CU124}, torch=CU124)
    (f,) = _found(_with(base, env={"CUDA_VISIBLE_DEVICES": "0,1,2,3"}, gpus=2))["cuda-visible-devices-beyond-gpus"]
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3 on a machine with 2 GPU(s)" in f.cause
    assert "cuda-visible-devices-beyond-gpus" not in _found(_with(base, env={"CUDA_VISIBLE_DEVICES": "1"}, gpus=2))
    assert "cuda-visible-devices-beyond-gpus" not in _found(_with(base, env={"CUDA_VISIBLE_DEVICES": "GPU-5e1c"}, gpus=2))


@pytest.mark.parametrize(("liger", "transformers", "fid"), [
    ("0.5.9", "4.52.0", "liger-transformers-mismatch"),  # huggingface/trl#3480
    ("0.6.3", "4.56.2", "liger-063-needs-transformers-457"),
])
def test_liger_entries_fire_on_their_failing_pairs_only(liger, transformers, fid):
    torch = "2.7.0"
    # liger-transformers-mismatch needs a script that turns Liger's patches on (their modules load only then)
    script = parse_script("from trl import SFTConfig\nSFTConfig(output_dir='o', use_liger_kernel=True)\n", path="train.py")

    def facts(pins: dict[str, str]):
        return dataclasses.replace(saved_facts(pins), script=script)

    assert fid in _found(facts({"liger-kernel": liger, "transformers": transformers, "torch": torch}))
    fixed = {"0.5.9": ("0.5.10", transformers), "0.6.3": (liger, "4.57.0")}[liger]
    assert fid not in _found(facts({"liger-kernel": fixed[0], "transformers": fixed[1], "torch": torch}))


def test_liger_mismatch_without_a_script_cannot_be_checked():
    found = _found(saved_facts({"liger-kernel": "0.5.9", "transformers": "4.52.0", "torch": "2.7.0"}))
    assert "liger-transformers-mismatch" not in found


def test_flash_attn_without_a_wheel_for_the_installed_torch():
    # flash-attn 2.7.0.post2's wheels cover torch 2.1-2.5 (cu11, cu12): torch 2.6 came later
    facts = saved_facts({"flash-attn": "2.7.0.post2", "torch": "2.6.0+cu124"}, torch="2.6.0+cu124")
    (f,) = _found(facts)["extension-without-wheel-for-torch"]
    assert f.title == "flash-attn 2.7.0.post2 has no prebuilt wheel for torch 2.6.0+cu124: built here from source, or for another torch"
    assert "torch 2.6.0 is outside <2.6,>=2.1" in [e.text for e in f.evidence] and f.see == ("flash-attn-abi-undefined-symbol",)
    fits = saved_facts({"flash-attn": "2.7.0.post2", "torch": CU124}, torch=CU124)
    assert "extension-without-wheel-for-torch" not in _found(fits)


def test_rtx_4090s_without_p2p_disabled_under_a_launcher_accelerate_refuses():
    base = saved_facts({"accelerate": "1.6.0", "torch": CU124}, torch=CU124)
    board = tuple(Gpu(index=i, name="NVIDIA GeForce RTX 4090", compute_capability="8.9", memory_mib=24564,
                      bus_id=f"0000:{i:02x}:00.0") for i in range(2))
    facts = dataclasses.replace(base, hardware=Hardware(source=HardwareSource.NVML, driver="550.54.15",
                                                        driver_cuda="12.4", gpus=board, links=()))
    assert "accelerate-rtx4000-p2p-notimplemented" in _found(facts)
    cleared = _with(facts, env={"NCCL_P2P_DISABLE": "1", "NCCL_IB_DISABLE": "1"})
    assert "accelerate-rtx4000-p2p-notimplemented" not in _found(cleared)


def test_vllm_on_a_pascal_gpu_hits_triton():
    base = saved_facts({"vllm": "0.7.2", "torch": CU124}, torch=CU124)
    p100 = (Gpu(index=0, name="Tesla P100-PCIE-16GB", compute_capability="6.0", memory_mib=16280, bus_id="0000:01:00.0"),)
    facts = dataclasses.replace(base, hardware=Hardware(source=HardwareSource.NVML, driver="550.54.15",
                                                        driver_cuda="12.4", gpus=p100, links=()))
    assert "triton-gpu-too-old" in _found(facts)


@pytest.mark.parametrize(("nvcc", "gcc", "fires"), [
    ("12.1.105", "13.2.0", True),  # NVIDIA/cuda-samples#250: CUDA 12.1 stops at gcc 12
    ("12.4.131", "13.2.0", False),
    ("12.1.105", "12.3.0", False),
])
def test_a_gcc_newer_than_nvcc_accepts_beside_deepspeed(nvcc, gcc, fires):
    tools = (Tool(name="nvcc", version=nvcc), Tool(name="gcc", version=gcc))
    facts = _with(saved_facts({"torch": CU124, "deepspeed": "0.16.3"}, torch=CU124), tools=tools)
    assert ("nvcc-gcc-too-new" in _found(facts)) is fires


def test_gpus_bound_per_task_under_srun_leave_cuda_local_rank_missing():
    base = saved_facts({"torch": CU124}, torch=CU124)
    # ACEsuit/mace#435: --ntasks-per-node=8 --gpus-per-task=1, every task but the first fails
    env = {"SLURM_NTASKS_PER_NODE": "8", "SLURM_GPUS_PER_TASK": "1", "SLURM_GPUS_ON_NODE": "8", "CUDA_VISIBLE_DEVICES": "3"}
    (f,) = _found(_with(base, env=env, gpus=8, launcher=Launcher.SRUN))["slurm-task-gpu-binding-local-rank"]
    assert "--gpus-per-task (SLURM_GPUS_PER_TASK=1)" in f.cause and f.effect.value == "wont-start"
    per_node = {"SLURM_NTASKS_PER_NODE": "8", "SLURM_GPUS_ON_NODE": "8", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}
    assert "slurm-task-gpu-binding-local-rank" not in _found(_with(base, env=per_node, gpus=8, launcher=Launcher.SRUN))


def test_an_absent_package_is_one_finding_with_the_install_command():
    # trl requires accelerate; the catalog also knows that Trainer needs it: reported once
    found = _found(saved_facts({"trl": "0.15.2", "transformers": "4.48.3", "datasets": "3.2.0", "torch": CU124}, torch=CU124))
    (missing,) = found["missing-requirement"]
    assert "accelerate>=0.34.0" in missing.fix.requires
    assert "transformers-trainer-needs-accelerate" not in found
    # Trainer needs it: a script that trains with one gets the entry; transformers alone (inference, serving) does not.
    alone = saved_facts({"transformers": "4.48.3"})
    assert "transformers-trainer-needs-accelerate" not in _found(alone)
    trains = dataclasses.replace(alone, script=Script(path="train.py", trainers=("Trainer",), device_maps=(), use_vllm=None,
                                                      vllm_mode=None, config_access=False, gradient_checkpointing=None, use_cache=None))
    assert "transformers-trainer-needs-accelerate" in _found(trains)


def test_a_system_toolkit_of_a_newer_major_than_the_driver_where_something_loads_it():
    base = saved_facts({"torch": CU124, "deepspeed": "0.16.3"}, torch=CU124)
    facts = _with(base, tools=(Tool(name="nvcc", version="13.0.48"),), gpus=1, driver="550.54.15")
    facts = dataclasses.replace(facts, system=dataclasses.replace(facts.system, cuda_toolkit="13.0.1"))
    (f,) = _found(facts)["cuda-driver-insufficient-runtime"]
    assert "deepspeed 0.16.3 builds its CUDA code with that toolkit" in [e.text for e in f.evidence]
    same_major = dataclasses.replace(facts, system=dataclasses.replace(facts.system, cuda_toolkit="12.8.1"))
    assert "cuda-driver-insufficient-runtime" not in _found(same_major)  # minor-version compatibility
