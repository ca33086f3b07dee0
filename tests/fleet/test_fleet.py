"""`compat fleet DIR`, --baseline and --slurm (a fake srun), on fleets built from recorded facts."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import CompatError
from compat.judge.fleet import judge_fleet, slow_pairs, world_checks
from compat.matrix import load_matrix
from compat.model.facts import dump_facts
from compat.model.findings import Severity
from compat.model.fleet import Member, MemberState, PairTiming, RankTiming, Smoke, WorldProblem
from compat.report.fleet import names, render_text
from tests.fleet import nodes
from tests.support.golden import check_golden
from tests.support.paths import GOLDEN

BIN = Path(__file__).with_name("bin")


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["fleet", *args])
    if isinstance(result.exception, CompatError):
        return 2, str(result.exception)  # compat.cli.main prints it on one line and exits 2
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def cluster32(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return nodes.write_cluster(tmp_path_factory.mktemp("fleet32"), nodes.cluster(32))


def test_32_nodes_one_report_grouped_by_what_differs(cluster32: Path) -> None:
    code, out = _run(str(cluster32))
    assert code == 1
    assert "compat fleet: 32 nodes, 32 answered" in out
    assert "node-07 and node-12 have torch 2.6.0+cu124; the other 30 nodes have 2.5.1+cu124" in out
    assert "node-17 has trl 0.16.0; the other 31 nodes have 0.15.2" in out
    assert "node-20 has driver branch 535; the other 31 nodes have 550" in out
    assert "node-20 has 8× NVIDIA H100 PCIe; the other 31 nodes have 8× NVIDIA H100 80GB HBM3" in out
    assert "node-03 has NCCL_IB_HCA=mlx5_0; the other 31 nodes have NCCL_IB_HCA unset" in out
    assert "nccl-shm-too-small on node-03 (1 of 32)" in out  # doctor's check, on the one node it holds on
    check_golden(GOLDEN / "fleet-32.txt", out)


def test_json_is_deterministic_and_structured(cluster32: Path) -> None:
    code, out = _run(str(cluster32), "--json")
    assert code == 1 and out == _run(str(cluster32), "--json")[1]
    doc = json.loads(out)
    assert doc["schema_version"] == 2 and doc["nodes"] == 32 and doc["failed"] is True
    torch = next(d for d in doc["differences"] if d["aspect"] == "torch-build")
    assert torch["variants"] == [
        {"value": "2.5.1+cu124", "members": [f"node-{i:02d}" for i in range(1, 33) if i not in (7, 12)]},
        {"value": "2.6.0+cu124", "members": ["node-07", "node-12"]},
    ]
    check_golden(GOLDEN / "fleet-32.json.txt", out)


def test_json_matches_the_shipped_schema(cluster32: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "compat" / "schemas" / "fleet.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(_run(str(cluster32), "--json")[1]), schema)


def test_identical_nodes_agree(tmp_path: Path) -> None:
    box = nodes.base()
    code, out = _run(str(nodes.write_cluster(tmp_path, {"a": box, "b": box})), "--fail-on", "error")
    assert "Differences" not in out and "No answer" not in out
    assert code == 1  # the recorded box has doctor errors of its own (a GRPO/FSDP pattern, missing requirements)


def test_baseline_reports_what_changed(tmp_path: Path) -> None:
    old = nodes.write_cluster(tmp_path / "old", {f"node-{i:02d}": nodes.base() for i in range(1, 5)})
    new_nodes = {f"node-{i:02d}": nodes.base() for i in range(1, 5)}
    new_nodes["node-02"] = nodes.with_torch(nodes.with_env(nodes.base(), NCCL_P2P_DISABLE="1"), "2.6.0+cu124")
    new = nodes.write_cluster(tmp_path / "new", new_nodes)
    code, out = _run(str(new), "--baseline", str(old))
    assert code == 1
    assert "Since the baseline (2 changes)" in out
    assert "node-02: NCCL_P2P_DISABLE unset → NCCL_P2P_DISABLE=1" in out
    assert "node-02: torch 2.5.1+cu124 → 2.6.0+cu124" in out


def test_unreadable_snapshot_is_a_silent_node(tmp_path: Path) -> None:
    nodes.write_cluster(tmp_path, {"good": nodes.base()})
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    code, out = _run(str(tmp_path))
    assert code == 1
    assert "No answer (1)" in out and "bad: unreadable" in out and "bad.json: not JSON" in out


def test_usage_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    assert _run()[0] == 2
    assert _run(str(tmp_path))[0] == 2  # no facts files
    assert _run(str(tmp_path / "none"))[0] == 2
    assert _run(str(tmp_path), "--ray", "127.0.0.1:1")[0] == 2  # two sources


@pytest.mark.slow  # two real `compat facts` children under the fake srun
def test_slurm_mode_through_a_fake_srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """srun runs the real `compat facts -o DIR/%N.json` once per node; each node's own environment is read."""
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "gpu-[01-02]")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    monkeypatch.setenv("FAKE_SLURM_NODES", "gpu-01 gpu-02")
    monkeypatch.setenv("FAKE_SLURM_ODD", "gpu-02")
    out_dir = tmp_path / "facts"
    # A bound that no loaded machine reaches: srun returns as soon as both nodes have written their facts.
    code, out = _run("--slurm", "--out", str(out_dir), "--timeout", "120")
    assert code in (0, 1), out  # a verdict
    assert sorted(p.name for p in out_dir.glob("*.json")) == ["gpu-01.json", "gpu-02.json"]
    assert "compat fleet: 2 nodes, 2 answered (world size 2)" in out
    assert "gpu-02 has NCCL_DEBUG=WARN; gpu-01 has NCCL_DEBUG unset" in out


def test_slurm_names_the_node_that_hangs_and_reads_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """srun outlives --timeout: it is killed, the node that wrote facts is read, the silent one is timed out.

    The answering nodes write recorded facts at once (FAKE_SLURM_FACTS): the real `compat facts` under srun is the
    test above, and a node slower than the bound is what this one is about, so the bound can be short.
    """
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "gpu-[01-03]")
    monkeypatch.setenv("SLURM_NTASKS", "3")
    monkeypatch.setenv("FAKE_SLURM_NODES", "gpu-01 gpu-02 gpu-03")
    monkeypatch.setenv("FAKE_SLURM_HANG", "gpu-03")
    monkeypatch.setenv("FAKE_SLURM_FACTS", str(nodes.DATA / "h100-8x.json"))
    out_dir = tmp_path / "facts"
    code, out = _run("--slurm", "--out", str(out_dir), "--timeout", "3")
    assert code == 1, out
    assert sorted(p.name for p in out_dir.glob("*.json")) == ["gpu-01.json", "gpu-02.json"]
    assert "compat fleet: 3 nodes, 2 answered (world size 3)" in out
    assert "gpu-03: timed-out" in out and "timed out after 3 s" in out


def test_slurm_outside_an_allocation_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    code, out = _run("--slurm")
    assert code == 2 and "SLURM_JOB_ID is not set" in out


def test_world_size_against_gpus() -> None:
    box = nodes.base()  # 8 visible GPUs, torch built for CUDA
    eight = [Member(node="a", rank=r, local_rank=r, facts=box) for r in range(9)]
    (more,) = world_checks(eight, 9)[:1]
    assert more.problem is WorldProblem.MORE_RANKS_THAN_GPUS and more.ranks == 9 and more.gpus == 8
    per_node = [Member(node=n, facts=box) for n in ("a", "b")]
    (exceeds,) = world_checks(per_node, 32)
    assert exceeds.problem is WorldProblem.WORLD_EXCEEDS_GPUS and exceeds.gpus == 16
    assert world_checks(per_node, 16) == ()
    cpu = json.loads((nodes.DATA / "cpu-vm.json").read_text())
    assert cpu["hardware"]["gpus"] == []
    report = judge_fleet(per_node, load_matrix(()), world_size=32)
    assert "world size 32 but the nodes see 16 GPUs in all" in render_text(report)


def test_silent_members_smoke_failures_and_slow_links() -> None:
    box = nodes.base()
    members = [Member(node="a", rank=0, local_rank=0, facts=box),
               Member(node="b", rank=1, local_rank=0, state=MemberState.TIMED_OUT, detail="no facts within 5 s")]
    pairs = (PairTiming(a="a", b="b", seconds=0.01, bus_gbps=10.0), PairTiming(a="a", b="c", seconds=0.01, bus_gbps=9.0),
             PairTiming(a="b", b="c", seconds=0.1, bus_gbps=1.0), PairTiming(a="c", b="d", seconds=None, bus_gbps=None,
                                                                            error="no result within 5 s"))
    smoke = Smoke(backend="nccl", size_bytes=2**20, timeout_s=5, pairs=pairs,
                  ranks=(RankTiming(rank=0, node="a", seconds=0.002), RankTiming(rank=1, node="b", seconds=None,
                                                                             error="no result within 5 s")))
    assert [(p.a, p.b) for p in slow_pairs(smoke)] == [("b", "c")]
    report = judge_fleet(members, load_matrix(()), smoke=smoke, fail_on=Severity.WARNING, strict=True)
    assert report.failed and report.missing[0].member == "b[rank 1]"
    text = render_text(report)
    assert "b[rank 1]: timed-out" in text
    assert "b ↔ c: 1.00 GB/s bus bandwidth (100.0 ms) (under half the median: a slow link)" in text
    assert "✗ c ↔ d: no result within 5 s" in text and "✗ rank 1 (b): no result within 5 s" in text
    assert "Cannot check" in text  # --strict keeps the undecided findings
    broken = dataclasses.replace(smoke, error="the gloo process group did not form")
    assert "✗ the gloo process group did not form" in render_text(judge_fleet(members, load_matrix(()), smoke=broken))


def test_names_are_shortened() -> None:
    assert names(("a",)) == "a" and names(("a", "b")) == "a and b"
    assert names(tuple("abcdefgh")) == "a, b, c, d, e and 3 more"


def test_facts_output_expands_the_node_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURMD_NODENAME", "gpu-09")
    src = tmp_path / "in.json"
    src.write_text(dump_facts(nodes.base()), encoding="utf-8")
    result = CliRunner().invoke(app, ["facts", "--facts", str(src), "-o", str(tmp_path / "out" / "%N.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "gpu-09.json").read_text() == dump_facts(nodes.base())
