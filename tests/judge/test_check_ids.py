"""Every built-in check speaks through one catalog entry, and doctor reports each failure once."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from compat.judge import checks
from compat.judge.checks._util import fields
from compat.judge.diagnose import catalog_findings, diagnose
from compat.maintain.validate import _check_placeholders, _Collector
from compat.model.facts import (
    Distribution,
    Facts,
    Gpu,
    Hardware,
    HardwareSource,
    Interconnect,
    Link,
    TorchBuild,
)
from compat.model.findings import Fix, Severity, Status
from compat.model.unknown import Unknown
from tests.support.facts import facts, interpreter, launch_by, torch_build
from tests.support.fixtures import ids
from tests.support.matrix import shipped_matrix, shipped_validation

DATA = Path(__file__).resolve().parent.parent / "data"
MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)

# Named here on purpose: adding, renaming or dropping a check's id is a visible change to this list.
MINE = {
    "unsatisfied-requirement": {"dist", "project", "wanted", "dep"},
    "missing-requirement": {"names", "dists"},
    "torch-pin-broken-extension": {"dist", "project", "pinned", "installed"},
    "unsatisfied-extra-requirement": {"dist", "project", "extras", "wanted", "dep", "name"},
    "bf16-unsupported-gpu-trainer": set(),
    "gpu-without-bf16": {"gpu"},
    "fp8-unsupported-gpu": {"gpu"},
    "flash-attn-requires-ampere": set(),
    "multi-gpu-without-launcher": {"count"},
    "more-processes-than-gpus": {"launcher", "processes", "count", "setting"},
    "cuda-visible-devices-beyond-gpus": {"visible", "count"},
    "system-cuda-on-ld-library-path": {"entries"},
    "slurm-task-gpu-binding-local-rank": {"binding"},
    "extension-without-wheel-for-torch": {"dist", "project", "torch", "wheels", "cuda", "python", "module", "dist_pin"},
    "nccl-p2p-hang-pcie": set(),
    "nccl-shm-too-small": set(),
    "nccl-version-mismatch": {"loaded", "wheel", "wheel_version", "torch"},
    "api-import-link-broken": {"importer", "importer_version", "provider", "provider_version", "module", "imported", "present", "how"},
    "api-import-link-guarded": {"importer", "importer_version", "provider", "provider_version", "module", "imported", "present", "how"},
}
CUDA = {
    "torch-import-fails", "cuda-driver-too-old", "torch-cuda-minor-compat",
    "torch-cpu-only-build", "gpu-arch-not-in-torch-build",
    "ds-cuda-version-mismatch-opbuild", "container-cuda-newer-than-driver", "nvcc-gcc-too-new",
    "cuda-driver-insufficient-runtime",
}


def test_the_owned_ids_are_these():
    assert set(MINE) | CUDA == checks.OWNED_IDS


@pytest.mark.parametrize("fid", sorted(MINE))
def test_each_check_id_has_its_catalog_entry_with_the_fields_it_fills(fid):
    sig = MATRIX.signature(fid)
    assert sig is not None, f"{fid} has no entry in matrix/signatures/"
    used = fields(sig.title) | fields(sig.cause) | fields(sig.fix.advice)
    assert used == MINE[fid] == checks.OWNS[fid]


@pytest.mark.parametrize("fid", sorted(CUDA))
def test_each_cuda_check_id_has_its_catalog_entry_and_fills_no_field(fid):
    sig = MATRIX.signature(fid)
    assert sig is not None, f"{fid} has no entry in matrix/signatures/"
    assert fields(sig.title) | fields(sig.cause) | fields(sig.fix.advice) == set() == checks.OWNS[fid]


def test_the_shipped_catalog_fills_only_declared_fields():
    problems = shipped_validation().problems
    assert [p for p in problems if "field" in p or "braces" in p] == []


def _sig(sid: str, text: str, *, patterns: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(id=sid, title=text, cause="c", fix=Fix(advice="a"), patterns=patterns)


@pytest.mark.parametrize(("sig", "message"), [
    (_sig("ours", "{gpu} has no bf16"), "{gpu} looks like a field, but no built-in check fills this entry"),
    (_sig("gpu-without-bf16", "{card} has no bf16"), "{card} is not a field its built-in check fills (it fills: gpu)"),
    (_sig("flash-attn-requires-ampere", "{gpu} is old", patterns=("x",)), "(it fills: none)"),
    (_sig("gpu-without-bf16", "{gpu} is old", patterns=("x",)), "explain shows an entry with patterns unfilled"),
    (_sig("gpu-without-bf16", "{gpu has no bf16"), "write literal braces as {{ and }}"),
])
def test_validate_rejects_fields_no_check_fills(sig, message):
    out = _Collector()
    _check_placeholders(out, "signatures/x.toml", sig)
    assert any(message in p for p in out.problems), out.problems


def test_literal_braces_in_a_plain_entry_are_text():
    out = _Collector()
    _check_placeholders(out, "signatures/x.toml", _sig("ours", 'device_map={"": local_rank}'))
    assert out.problems == []


def test_the_catalog_loop_leaves_owned_entries_to_their_checks():
    facts = _facts(gpus=_gpus(2, "Tesla T4", "7.5"), packages=(Distribution(name="flash-attn", version="2.5.8", requires=()),))
    assert not {f.id for f in catalog_findings(facts, MATRIX)} & checks.OWNED_IDS


def _once(report: dict, *candidates: str) -> dict:
    hits = [f for f in report["findings"] if f["id"] in candidates]
    assert len(hits) == 1, [(f["id"], f["title"]) for f in hits]
    return hits[0]


def test_flash_attn_on_a_t4_is_one_finding(env, doctor):
    python = env(torch="2.5.1+cu124", flash_attn="2.5.8")
    _, report = doctor("--python", python, "--gpus", "1xT4", "--driver", "550.54.15")
    f = _once(report, "flash-attn-requires-ampere", "flash-attn-needs-ampere")
    assert f["id"] == "flash-attn-requires-ampere" and f["severity"] == "warning"
    assert f["evidence"] == [{"kind": "observed", "line": None, "source": "", "text": "flash-attn 2.5.8 installed"},
                             {"kind": "declared", "line": None, "source": "", "text": "T4 (sm_75) (declared)"}]
    assert "sdpa" in f["fix"]["advice"]
    assert "gpu-without-bf16" in ids(report)  # a different finding: the T4 has no bf16 at all


def test_bf16_on_a_t4_is_one_finding(env, doctor):
    python = env(torch="2.5.1+cu124")
    _, report = doctor("--python", python, "--gpus", "2xT4", "--driver", "550.54.15", "--launcher", "accelerate",
                       "--accelerate-config", str(DATA / "scripts" / "accelerate_multi_gpu.yaml"))
    f = _once(report, "bf16-unsupported-gpu-trainer", "bf16-unsupported-gpu", "gpu-without-bf16")
    assert f["id"] == "bf16-unsupported-gpu-trainer" and f["severity"] == "error"


def test_more_processes_than_gpus_fills_its_fields(env, doctor):
    python = env(torch="2.5.1+cu124")
    config = str(DATA / "accelerate" / "zero3.yaml")
    _, report = doctor("--python", python, "--gpus", "2xA100", "--driver", "550.54.15", "--launcher", "accelerate",
                       "--accelerate-config", config)
    f = _once(report, "more-processes-than-gpus", "trl-more-processes-than-gpus", "nccl-duplicate-gpu")
    assert f["title"] == "accelerate starts 8 processes for 2 GPUs"
    assert f["fix"]["advice"] == f"Set num_processes in {config} to 2 or fewer."


def test_cpu_only_torch_on_a_gpu_machine_is_one_finding(env, doctor):
    python = env(torch="2.13.0+cpu")
    _, report = doctor("--python", python, "--gpus", "8xH100", "--driver", "580.65.06")
    f = _once(report, "torch-cpu-only-build", "torch-cpu-build-on-gpu-machine")
    assert f["id"] == "torch-cpu-only-build"


def _gpus(n: int, name: str, cc: str) -> tuple[Gpu, ...]:
    return tuple(Gpu(index=i, name=name, compute_capability=cc, memory_mib=24564, bus_id=f"0000:0{i}:00.0") for i in range(n))


def _facts(*, gpus: tuple[Gpu, ...], packages: tuple[Distribution, ...] = (), torch: TorchBuild | None = None,
           env: dict[str, str] | None = None, shm_mib: int = 65536, container: str | None = None) -> Facts:
    links = tuple(Link(a=a, b=b, interconnect=Interconnect.PCIE_HOST_BRIDGE)
                  for a in range(len(gpus)) for b in range(a + 1, len(gpus)))
    return facts(
        python=interpreter(markers={"python_version": "3.11", "python_full_version": "3.11.9", "sys_platform": "linux"}),
        packages=packages,
        torch=torch,
        hardware=Hardware(source=HardwareSource.NVML, driver="550.54.15", driver_cuda="12.4", gpus=gpus, links=links),
        launch=launch_by("torchrun", env=env, shm_bytes=shm_mib * 2**20, container=container),
    )


def _rtx4090_box(**kw: object) -> Facts:
    torch = torch_build("2.5.1+cu124", cudnn="9.1", arch_list=("sm_80", "sm_89", "sm_90"))
    packages = (Distribution(name="torch", version="2.5.1+cu124", requires=()),
                Distribution(name="nvidia-nccl-cu12", version="2.20.5", requires=()))
    return _facts(gpus=_gpus(2, "NVIDIA GeForce RTX 4090", "8.9"), packages=packages, torch=torch, **kw)  # type: ignore[arg-type]


def test_p2p_shm_and_nccl_on_a_consumer_box_in_docker_are_one_finding_each():
    findings = diagnose(_rtx4090_box(shm_mib=64, container="docker"), MATRIX)
    found = Counter(f.id for f in findings if f.status is Status.FOUND)
    assert found == {"nccl-p2p-hang-pcie": 1, "nccl-shm-too-small": 1, "nccl-version-mismatch": 1}
    by_id = {f.id: f for f in findings}
    assert by_id["nccl-shm-too-small"].severity is Severity.ERROR  # Docker's 64 MiB: NCCL will fail
    assert by_id["nccl-version-mismatch"].title == "torch loads NCCL 2.21.5, but nvidia-nccl-cu12 2.20.5 is installed"
    assert "reinstall nvidia-nccl-cu12 at the version torch 2.5.1+cu124 requires" in by_id["nccl-version-mismatch"].fix.advice


def test_outside_a_container_a_small_dev_shm_warns_and_p2p_disable_clears_the_hang():
    findings = diagnose(_rtx4090_box(shm_mib=64, env={"NCCL_P2P_DISABLE": "1"}), MATRIX)
    found = {f.id: f for f in findings if f.status is Status.FOUND}
    assert found["nccl-shm-too-small"].severity is Severity.WARNING
    assert "nccl-p2p-hang-pcie" not in found


def test_a_check_that_cannot_run_reports_its_entry_once():
    facts = _rtx4090_box(container="docker")
    facts = replace(facts, launch=replace(facts.launch, shm_bytes=Unknown(reason="not probed")))
    undecided = [f for f in diagnose(facts, MATRIX) if f.status is Status.CANNOT_CHECK]
    assert [f.id for f in undecided] == ["nccl-shm-too-small"]
    sig = MATRIX.signature("nccl-shm-too-small")
    assert sig is not None and undecided[0].title == sig.title and undecided[0].unknown == ("/dev/shm: not probed",)


def test_a_cannot_check_title_shows_unfilled_fields_as_ellipses():
    facts = replace(_rtx4090_box(), packages=Unknown(reason="could not list"))
    (f,) = [f for f in diagnose(facts, MATRIX) if f.id == "unsatisfied-requirement"]
    assert f.status is Status.CANNOT_CHECK and f.title == "… requires …, but … is installed"
