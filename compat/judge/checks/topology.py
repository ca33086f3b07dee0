"""How the GPUs talk: peer-to-peer over PCIe, shared memory, and the NCCL that is really loaded."""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import about, cannot_check, found
from compat.matrix import Matrix
from compat.model.facts import Facts, Interconnect, TorchBuild
from compat.model.findings import Finding, Severity, observed
from compat.model.unknown import Unknown

P2P = "nccl-p2p-hang-pcie"
SHM = "nccl-shm-too-small"
NCCL = "nccl-version-mismatch"

OWNS = {
    P2P: frozenset[str](),
    SHM: frozenset[str](),
    NCCL: frozenset({"loaded", "wheel", "wheel_version", "torch"}),
}
"""The catalog entries these checks speak through, and the `{fields}` they fill in each."""

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
    evidence = [about(facts, "gpus", f"{len(gpus)}x {name}, no NVLink")]
    if refused:
        evidence.append(observed(f"driver reports P2P unsupported between GPU {refused[0].a} and GPU {refused[0].b}"))
    yield found(matrix, P2P, evidence=tuple(evidence))


def check_shm(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    count = facts.visible_gpus()
    if isinstance(count, Unknown) or count < 2:
        return
    if "gpus" in facts.declared:
        yield cannot_check(matrix, SHM, "the GPUs are declared: this /dev/shm is not the one the job will run with")
        return
    shm = facts.launch.shm_bytes
    if isinstance(shm, Unknown):
        yield cannot_check(matrix, SHM, f"/dev/shm: {shm.reason}")
        return
    mib = shm // 2**20
    if mib >= _SHM_FLOOR_MIB:
        return
    # Docker's 64 MiB default is a certain failure; a small /dev/shm outside a container is rarer
    # and may be deliberate, so it warns.
    yield found(
        matrix, SHM, severity=None if facts.launch.container else Severity.WARNING,
        evidence=(observed(f"/dev/shm {mib} MiB"), observed(f"{count} visible GPUs"),
                  observed(f"container: {facts.launch.container or 'none'}")),
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
    yield found(
        matrix, NCCL, values={"loaded": torch.nccl, "wheel": wheel.name, "wheel_version": wheel.version, "torch": torch.version},
        evidence=(observed(f"torch.cuda.nccl.version() = {torch.nccl}"), observed(f"{wheel.name} {wheel.version} installed"),
                  observed(f"LD_LIBRARY_PATH={facts.launch.env.get('LD_LIBRARY_PATH', '(unset)')}")),
    )


def _same(loaded: str, wheel: str) -> bool:
    # The wheel may carry a fourth component or a post tag ("2.21.5.post1"); NCCL reports three.
    return wheel.split("+")[0].startswith(loaded.strip())
