"""`torchrun ... -m compat.fleet` for real: 4 CPU ranks over gloo on 127.0.0.1, as two launchers ("nodes")."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.fleet.launch import PYTHON, env, free_port, kill, other_venv, torchrun

pytestmark = pytest.mark.needs_torch


@pytest.mark.slow  # two torchrun launchers, 4 ranks that each import torch
def test_two_nodes_drift_and_smoke(tmp_path: Path) -> None:
    """Node 1 runs in another venv (peft 0.99.0) with NCCL_DEBUG set: both differences are named, the smoke test runs."""
    other = other_venv(tmp_path / "venv")
    port, report = free_port(), tmp_path / "report.json"
    args = ["-m", "compat.fleet", "--smoke", "--smoke-mib", "1", "--timeout", "60", "--json", "-o", str(report),
            "--save", str(tmp_path / "saved")]
    nodes = [torchrun(PYTHON, 0, port, args, env()), torchrun(other, 1, port, args, env(NCCL_DEBUG="WARN"))]
    try:
        outputs = [p.communicate(timeout=240)[0].decode() for p in nodes]
    finally:
        for p in nodes:
            kill(p)
    assert report.exists(), outputs
    doc = json.loads(report.read_text())
    # One host runs both launchers: the nodes are told apart by torchrun's node rank (host#0, host#1).
    assert [m.rsplit("#", 1)[1] for m in doc["members"]] == ["0[rank 0]", "0[rank 1]", "1[rank 2]", "1[rank 3]"]
    assert doc["missing"] == [] and doc["world_size"] == 4 and doc["nodes"] == 2
    diffs = {(d["aspect"], d["subject"]): d for d in doc["differences"]}
    peft = diffs[("package", "peft")]
    assert len(peft["variants"]) == 2 and "0.99.0" in {v["value"] for v in peft["variants"]}
    assert peft["severity"] == "error"
    nccl = diffs[("env", "NCCL_DEBUG")]
    assert {v["value"] for v in nccl["variants"]} == {"WARN", None}
    assert [len(v["members"]) for v in nccl["variants"]] == [1, 1]  # named per node, not per rank
    smoke = doc["smoke"]
    assert smoke["backend"] == "gloo" and smoke["error"] is None
    assert [r["rank"] for r in smoke["ranks"]] == [0, 1, 2, 3] and all(r["seconds"] > 0 for r in smoke["ranks"])
    (pair,) = smoke["pairs"]
    assert pair["bus_gbps"] > 0 and pair["error"] is None
    assert doc["failed"] is True  # a package differs: an error, exit 1 as doctor
    assert len(list((tmp_path / "saved").glob("*.json"))) == 2


@pytest.mark.slow  # waits out the hung rank's 8 s --timeout
def test_a_rank_that_hangs_is_reported(tmp_path: Path) -> None:
    """Rank 3 sleeps forever: rank 0 reports it after --timeout, and the others are not held."""
    port, report = free_port(), tmp_path / "report.txt"
    script = str(Path(__file__).with_name("hang_rank.py"))
    args = [script, "--timeout", "8", "-o", str(report)]
    pidfile = tmp_path / "hung.pid"
    environ = env(FLEET_TEST_HANG_RANK="3", FLEET_TEST_PIDFILE=str(pidfile))
    nodes = [torchrun(PYTHON, 0, port, args, environ), torchrun(PYTHON, 1, port, args, environ)]
    started = time.monotonic()
    try:
        while not report.exists() and time.monotonic() - started < 180:
            time.sleep(0.2)
        elapsed = time.monotonic() - started
    finally:
        for p in nodes:
            kill(p)
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert report.exists(), [p.stdout.read().decode() if p.stdout else "" for p in nodes]
    text = report.read_text()
    assert "No answer (1)" in text
    assert "[rank 3]: timed-out" in text and "no facts within 8 s" in text
    assert elapsed < 170


def test_one_rank_in_process_with_smoke(monkeypatch: pytest.MonkeyPatch) -> None:
    """A world of one in this process (gloo on loopback): the gather, the smoke test and the members."""
    from compat.sources.fleet.torch_dist import gather_torch
    from tests.fleet import nodes

    for name, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}.items():
        monkeypatch.setenv(name, value)
    gathered = gather_torch(nodes.base, timeout=30, smoke=True, smoke_bytes=4096, smoke_timeout=30)
    assert gathered is not None and gathered.world_size == 1
    (member,) = gathered.members
    assert member.rank == 0 and member.facts == nodes.base()
    assert gathered.smoke is not None and gathered.smoke.backend == "gloo" and gathered.smoke.pairs == ()
    assert gathered.smoke.ranks[0].seconds is not None


def test_members_from_payloads() -> None:
    """Rank 0's view: a non-zero local rank shares its node's facts, a failed probe and a silent rank are named."""
    from compat.model.facts import dump_facts
    from compat.model.fleet import MemberState
    from compat.sources.fleet.torch_dist import _members
    from tests.fleet import nodes

    facts = dump_facts(nodes.with_env(nodes.base(), CUDA_VISIBLE_DEVICES="0,1"))
    launch = {"accelerate": None, "container": None, "env": {"CUDA_VISIBLE_DEVICES": "1"}, "launcher": "torchrun",
              "shm_bytes": 2**30}
    payloads = {
        0: json.dumps({"host": "a", "group_rank": "0", "local_rank": 0, "local_world": "2", "facts": facts}),
        1: json.dumps({"host": "a", "group_rank": "0", "local_rank": 1, "local_world": "2", "launch": launch}),
        2: json.dumps({"host": "b", "group_rank": "1", "local_rank": 0, "local_world": "2", "error": "OSError: boom"}),
    }
    members = _members(payloads, 4, 5.0)
    assert [m.state for m in members] == [MemberState.OK, MemberState.OK, MemberState.FAILED, MemberState.TIMED_OUT]
    assert members[1].facts is not None and members[1].facts.launch.env == {"CUDA_VISIBLE_DEVICES": "1"}
    assert members[1].facts.packages == members[0].facts.packages  # type: ignore[union-attr]
    assert members[3].node == "b" and members[3].detail == "no facts within 5 s"


def test_srun_and_mpirun_ranks_are_read() -> None:
    from compat.errors import UsageError
    from compat.sources.fleet.torch_dist import launcher_env, launcher_rank

    slurm = launcher_env({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_NODEID": "2"})
    assert launcher_rank(slurm) == (5, 8, 1) and slurm["GROUP_RANK"] == "2"
    mpi = launcher_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "RANK": "3", "WORLD_SIZE": "4"})
    assert launcher_rank(mpi) == (3, 4, 0)
    with pytest.raises(UsageError, match="runs under a launcher"):
        launcher_rank(launcher_env({}))
