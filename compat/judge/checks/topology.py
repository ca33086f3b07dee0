"""How the GPUs talk: peer-to-peer over PCIe, shared memory, and the NCCL that is really loaded."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import legacy_cannot_check, declared_note
from compat.model.facts import Facts, Interconnect, TorchBuild
from compat.model.findings import Finding, Fix, Severity, Status
from compat.matrix import Matrix
from compat.model.unknown import Unknown

_SHM_FLOOR_MIB = 1024


def check_p2p(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    gpus, links = facts.hardware.gpus, facts.hardware.links
    if isinstance(gpus, Unknown) or len(gpus) < 2 or isinstance(links, Unknown):
        return
    if any(link.interconnect == Interconnect.NVLINK for link in links):
        return
    consumer = []
    for gpu in gpus:
        model = matrix.gpus.find(gpu.name)
        if model is not None and model.consumer:
            consumer.append(gpu)
    refused = [link for link in links if link.p2p is False]
    if not consumer and not refused:
        return
    env = facts.launch.env
    if env.get("NCCL_P2P_DISABLE") == "1":
        return
    name = consumer[0].name if consumer else gpus[0].name
    evidence = [f"{len(gpus)}x {name}{declared_note(facts, 'gpus')}, no NVLink"]
    if refused:
        evidence.append(f"driver reports P2P unsupported between GPU {refused[0].a} and GPU {refused[0].b}")
    yield Finding(
        id="pcie-p2p-consumer-gpus",
        severity=Severity.WARNING,
        status=Status.FOUND,
        title=f"{name} GPUs on PCIe without NCCL_P2P_DISABLE: collectives can hang",
        cause="GeForce and workstation boards often lack working peer-to-peer over PCIe (ACS/IOMMU, driver "
        "limits). NCCL still tries P2P and hangs or fails; accelerate refuses RTX 40xx multi-GPU runs unless "
        "P2P and IB are disabled.",
        fix=Fix(advice="export NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 before launching (accelerate launch sets it "
                "for RTX 40xx), or disable ACS / use iommu=pt and verify with nccl-tests."),
        evidence=tuple(evidence),
        refs=("huggingface/accelerate#2195", "NVIDIA/nccl-tests#117", "NVIDIA/nccl#1637"),
    )


def check_shm(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    fid, title = "small-dev-shm", "/dev/shm has room for NCCL"
    count = facts.visible_gpus()
    if isinstance(count, Unknown) or count < 2:
        return
    if "gpus" in facts.declared:
        yield legacy_cannot_check(fid, Severity.WARNING, title, "the GPUs are declared: this /dev/shm is not the one the job will run with")
        return
    shm = facts.launch.shm_bytes
    if isinstance(shm, Unknown):
        yield legacy_cannot_check(fid, Severity.WARNING, title, f"/dev/shm: {shm.reason}")
        return
    mib = shm // 2**20
    if mib >= _SHM_FLOOR_MIB:
        return
    yield Finding(
        id=fid,
        severity=Severity.WARNING,
        status=Status.FOUND,
        title=f"/dev/shm is {mib} MiB on a {count}-GPU machine",
        cause="NCCL puts its intra-node buffers in /dev/shm; Docker's default 64 MiB makes it fail with "
        "`unhandled system error` / `Error while creating shared memory segment`.",
        fix=Fix(advice="Run the container with --ipc=host or --shm-size=16g (Kubernetes: an emptyDir with medium: "
                "Memory at /dev/shm)."),
        evidence=(f"/dev/shm {mib} MiB", f"{count} visible GPUs", f"container: {facts.launch.container or 'none'}"),
        refs=("NVIDIA/nccl#342", "vllm-project/vllm#6574"),
    )


def check_nccl(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = facts.torch
    if not isinstance(torch, TorchBuild) or not isinstance(torch.nccl, str) or isinstance(facts.packages, Unknown):
        return
    wheels = [d for d in facts.packages if d.name.startswith("nvidia-nccl-cu")]
    if not wheels:
        return
    wheel = wheels[0]
    if _same(torch.nccl, wheel.version):
        return
    yield Finding(
        id="nccl-version-mismatch",
        severity=Severity.WARNING,
        status=Status.FOUND,
        title=f"torch loads NCCL {torch.nccl}, but {wheel.name} {wheel.version} is installed",
        cause="The NCCL library torch actually loaded is not the one pip's metadata names: a system libnccl "
        "earlier on LD_LIBRARY_PATH, or nvidia-nccl-cu12 and -cu13 wheels writing the same libnccl.so.2. "
        "Ranks or vLLM workers can then run different NCCL versions, and collectives fail or hang.",
        fix=Fix(advice="Remove system CUDA/NCCL directories from LD_LIBRARY_PATH, or reinstall "
                f"{wheel.name} at the version torch {torch.version} requires."),
        evidence=(f"torch.cuda.nccl.version() = {torch.nccl}", f"{wheel.name} {wheel.version} installed",
                  f"LD_LIBRARY_PATH={facts.launch.env.get('LD_LIBRARY_PATH', '(unset)')}"),
        refs=("verl-project/verl#6621", "marin-community/marin#7344", "pytorch/pytorch#72768"),
    )


def _same(loaded: str, wheel: str) -> bool:
    # The wheel may carry a fourth component or a post tag ("2.21.5.post1"); NCCL reports three.
    return wheel.split("+")[0].startswith(loaded.strip())
