"""Fixed inputs for the golden tests: facts of two machines and findings that touch every part of a report."""

from __future__ import annotations

from compat.model.facts import (
    AccelerateConfig,
    Distribution,
    Facts,
    Gpu,
    Hardware,
    HardwareSource,
    Interconnect,
    Link,
    Script,
    System,
    Tool,
    TorchBuild,
    TorchSource,
)
from compat.model.findings import Finding, Fix, Severity, Status, curated, observed
from compat.model.unknown import Unknown
from tests.support.facts import facts, interpreter, launch_by

MARKERS = {
    "implementation_name": "cpython",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_system": "Linux",
    "python_full_version": "3.11.9",
    "python_version": "3.11",
    "sys_platform": "linux",
}


def h100_box() -> Facts:
    """A probed 8xH100 SXM box with torch 2.5.1+cu124, vLLM and TRL, launched by accelerate."""
    gpus = tuple(
        Gpu(index=i, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559, bus_id=f"00000000:{0x18 + i:02X}:00.0")
        for i in range(8)
    )
    links = tuple(
        Link(a=a, b=b, interconnect=Interconnect.NVLINK, nvlinks=18, p2p=True) for a in range(8) for b in range(a + 1, 8)
    )
    return facts(
        python=interpreter(executable="/opt/venv/bin/python", markers=MARKERS),
        packages=(
            Distribution(name="torch", version="2.5.1+cu124", requires=("filelock", "nvidia-nccl-cu12==2.21.5"), installer="pip"),
            Distribution(name="transformers", version="4.51.3", requires=("tokenizers<0.22,>=0.21",), installer="pip"),
            Distribution(name="trl", version="0.15.2", requires=("accelerate>=0.34.0", "transformers>=4.46.0"), installer="uv"),
            Distribution(name="vllm", version="0.7.2", requires=("torch==2.5.1",), installer="pip"),
        ),
        torch=TorchBuild(
            version="2.5.1+cu124",
            cuda="12.4",
            cudnn="90100",
            nccl="2.21.5",
            arch_list=("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"),
            cxx11_abi=False,
            source=TorchSource.IMPORT,
            debug=False,
            hip=None,
            xnnpack=True,
        ),
        hardware=Hardware(source=HardwareSource.NVML, driver="550.54.15", driver_cuda="12.4", gpus=gpus, links=links),
        launch=launch_by(
            "accelerate",
            accelerate=AccelerateConfig(
                path="/home/user/.cache/huggingface/accelerate/default_config.yaml",
                distributed_type="FSDP",
                num_processes=8,
                mixed_precision="bf16",
                fsdp_version=2,
                zero_stage=None,
            ),
            env={"CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7", "NCCL_DEBUG": "INFO"},
            shm_bytes=68719476736,
            container="docker",
        ),
        script=Script(
            path="train_grpo.py",
            trainers=("GRPOTrainer",),
            device_maps=(),
            use_vllm=True,
            vllm_mode="colocate",
            config_access=False,
            gradient_checkpointing=True,
            use_cache=None,
        ),
        system=System(
            os="Ubuntu 22.04.4 LTS",
            platform="linux-x86_64",
            cpu="Intel(R) Xeon(R) Platinum 8480+",
            tools=(Tool(name="nvcc", version="12.4"), Tool(name="gcc", version=None)),
        ),
    )


def unknown_box() -> Facts:
    """Facts where almost everything is unknown: no driver, packages unreadable, torch not importable."""
    return facts(
        python=interpreter(version="3.10.14", executable=Unknown(reason="not recorded"), glibc=None),
        packages=Unknown(reason="the interpreter did not answer in 10 s"),
        torch=Unknown(reason="torch import timed out"),
        hardware=Hardware(
            source=HardwareSource.NONE,
            driver=Unknown(reason="nvidia-smi not found"),
            driver_cuda=Unknown(reason="nvidia-smi not found"),
            gpus=Unknown(reason="no NVIDIA driver"),
            links=Unknown(reason="no NVIDIA driver"),
        ),
        launch=launch_by(Unknown(reason="not declared"), accelerate=Unknown(reason="config unreadable"),
                         shm_bytes=Unknown(reason="/dev/shm not mounted")),
        declared=("launcher",),
    )


def findings() -> tuple[Finding, ...]:
    """One of each shape: an error with commands and refs, a warning, an info, two cannot-checks."""
    return (
        Finding(
            id="torch-cuda-newer-than-driver",
            severity=Severity.ERROR,
            status=Status.FOUND,
            title="torch 2.5.1+cu124 needs CUDA 12.4; driver 470.82.01 supports CUDA <= 11.4",
            cause="The CUDA runtime inside the torch wheel is newer than the driver can serve.",
            fix=Fix(
                requires=("torch==2.5.1",),
                advice="Upgrade the driver to >= 525.60.13, or install the cu118 build.",
                commands=("pip install 'torch==2.5.1' --index-url https://download.pytorch.org/whl/cu118",),
            ),
            evidence=(curated("driver 470.82.01 supports CUDA <= 11.4", source="matrix/cuda.toml"),
                      observed("torch 2.5.1+cu124 was built with CUDA 12.4")),
            refs=("pytorch/pytorch#12345", "https://docs.nvidia.com/deploy/cuda-compatibility/"),
        ),
        Finding(
            id="nccl-p2p-pcie",
            severity=Severity.WARNING,
            status=Status.FOUND,
            title="8 GPUs talk over PCIe without P2P",
            cause="NCCL falls back to host memory; collectives are slow and may hang on some boards.",
            fix=Fix(advice="export NCCL_P2P_DISABLE=1 before launching."),
            evidence=(observed("links: PCIe host bridge", source="nvidia-smi topo -m", line=3),),
        ),
        Finding(
            id="vllm-v1-engine",
            severity=Severity.INFO,
            status=Status.FOUND,
            title="vLLM 0.7.2 uses the V0 engine by default",
            cause="",
            fix=Fix(),
        ),
        Finding(
            id="flash-attn-arch",
            severity=Severity.ERROR,
            status=Status.CANNOT_CHECK,
            title="flash-attn has kernels for this GPU",
            cause="flash-attn 2 needs sm_80 or newer.",
            fix=Fix(requires=("flash-attn>=2.7",)),
            unknown=("GPUs: no NVIDIA driver",),
        ),
        Finding(
            id="shm-too-small",
            severity=Severity.WARNING,
            status=Status.CANNOT_CHECK,
            title="/dev/shm holds NCCL's buffers",
            cause="",
            fix=Fix(),
            unknown=("shared memory: /dev/shm not mounted", "launcher: not declared"),
        ),
    )
