"""`compat fleet` and `python -m compat.fleet` under faults: malformed snapshots, huge numbers,
10,000 nodes, and a store or rank that is unreachable, dead or hung.

The torch.distributed side is a fake of what it raises (the exception names and messages below
were recorded from torch 2.13 on this project's test box): every case must end in a report
with the silent ranks named, or a one-line reason on a non-zero rank, never a traceback.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat import api
from compat.model.facts import dump_facts
from compat.model.fleet import MemberState
from compat.sources.fleet.torch_dist import Departed, Gathered, gather_torch
from tests.fault.fakes import REPO, one_line_error
from tests.fault.inputs import facts_with
from tests.fleet.nodes import cluster, write_cluster
from tests.support.main import compat_main

HUGE = "9" * 5000

# ------------------------------------------------------------------ saved snapshots


def _set(path: tuple[str | int, ...], value: object) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


# Every number a snapshot holds, 5000 digits long ("@HUGE@" is written as a bare JSON number).
SNAPSHOT_FAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "package-version": lambda d: d["packages"][0].__setitem__("version", HUGE),
    "package-name": lambda d: d["packages"][0].__setitem__("name", HUGE),
    "requirement": lambda d: d["packages"][0].__setitem__("requires", [f"torch>={HUGE}"]),
    "python": _set(("python", "version"), HUGE),
    "glibc": _set(("python", "glibc"), HUGE),
    "torch": _set(("torch", "version"), HUGE),
    "torch-cuda": _set(("torch", "cuda"), HUGE),
    "nccl": _set(("torch", "nccl"), HUGE),
    "driver": _set(("hardware", "driver"), HUGE + ".1"),
    "driver-cuda": _set(("hardware", "driver_cuda"), HUGE),
    "compute-capability": lambda d: d["hardware"]["gpus"][0].__setitem__("compute_capability", HUGE + ".0"),
    "gpu-memory": lambda d: d["hardware"]["gpus"][0].__setitem__("memory_mib", "@HUGE@"),
    "shm": _set(("launch", "shm_bytes"), "@HUGE@"),
    "schema": _set(("schema_version",), "@HUGE@"),
    "env": _set(("launch", "env", "NCCL_IB_TIMEOUT"), HUGE),
}


def _fleet_with_bad_node(tmp_path: Path, fault: str) -> Path:
    directory = write_cluster(tmp_path / "fleet", cluster(3))
    doc = json.loads((directory / "node-01.json").read_text())
    SNAPSHOT_FAULTS[fault](doc)
    (directory / "node-bad.json").write_text(json.dumps(doc).replace('"@HUGE@"', HUGE))
    return directory


@pytest.mark.parametrize("fault", sorted(SNAPSHOT_FAULTS))
def test_a_5000_digit_number_in_a_snapshot_is_that_nodes_problem(tmp_path, fault):
    report = api.fleet(api.FleetRequest(directory=_fleet_with_bad_node(tmp_path, fault)))
    assert len(report.members) == len(cluster(3)) + 1 and report.members[-1] == "node-bad"
    bad = [m for m in report.missing if m.member == "node-bad"]
    # The node is unreadable (with the reason) or judged with the value as unknown: never the fleet's crash.
    assert not bad or (bad[0].state is MemberState.UNREADABLE and bad[0].detail and HUGE not in bad[0].detail)
    assert all(HUGE not in (v.value or "") for d in report.differences for v in d.variants if d.subject != "NCCL_IB_TIMEOUT")


@pytest.mark.parametrize("text", ["{", "[]", "\x00", '{"schema_version": 1e999}', "{" * 100_000, '"' + "x" * 1000])
def test_a_torn_snapshot_is_unreadable_and_the_others_are_reported(tmp_path, text):
    directory = write_cluster(tmp_path / "fleet", cluster(3))
    (directory / "node-torn.json").write_text(text)
    result = compat_main("fleet", str(directory), "--json")
    assert result.returncode == 1, result.stderr[-500:]
    doc = json.loads(result.stdout)
    assert [(m["member"], m["state"]) for m in doc["missing"]] == [("node-torn", "unreadable")]
    assert len(doc["members"]) == len(cluster(3)) + 1


def test_ten_thousand_nodes_are_judged(tmp_path):
    """Cloned images: each distinct snapshot is parsed and judged once, each node reduced once per image."""
    texts = [dump_facts(f) for f in cluster(32).values()]
    directory = tmp_path / "fleet"
    directory.mkdir()
    for i in range(10_000):
        (directory / f"gpu-{i:05d}.json").write_text(texts[i % 32])
    (directory / "gpu-torn.json").write_text("{")
    result = compat_main("fleet", str(directory), "--json")
    assert result.returncode == 1, result.stderr[-500:]
    doc = json.loads(result.stdout)
    assert len(doc["members"]) == 10_001 and doc["nodes"] == 10_001
    assert [m["member"] for m in doc["missing"]] == ["gpu-torn"]
    torch = next(d for d in doc["differences"] if d["aspect"] == "torch-build")
    assert sum(len(v["members"]) for v in torch["variants"]) == 10_000


# ------------------------------------------------------------------ torch.distributed, faked


class DistNetworkError(RuntimeError):
    """torch.distributed.DistNetworkError (a RuntimeError subclass, as in torch)."""


class DistStoreError(RuntimeError):
    """torch.distributed.DistStoreError."""


UNREACHABLE = DistNetworkError(
    "The client socket has timed out after 2000ms while trying to connect to (127.0.0.1, 29999).\n"
    "Exception raised from throwTimeoutError at /__w/pytorch/pytorch/torch/csrc/distributed/c10d/socket.cpp:1030 "
    "(most recent call first):\nframe #0: c10::Error::Error(...) + 0x9f (0x7f in libc10.so)\n"
)
REFUSED = DistNetworkError("Connection reset by peer")
WAIT_TIMEOUT = DistStoreError("wait timeout after 2000ms, keys: /compat-fleet/present")


class FakeStore:
    """An in-memory TCPStore: `fail_on(key)` makes a get of that key raise (the store's host died)."""

    def __init__(self, data: dict[str, bytes] | None = None, *, broken: dict[str, Exception] | None = None) -> None:
        self.data = dict(data or {})
        self.broken = dict(broken or {})

    def _hit(self, key: str) -> None:
        if key in self.broken:
            raise self.broken[key]

    def set(self, key: str, value: str | bytes) -> None:
        self._hit(key)
        self.data[key] = value.encode() if isinstance(value, str) else value

    def get(self, key: str) -> bytes:
        self._hit(key)
        if key not in self.data:
            raise DistStoreError(f"wait timeout after 300000ms, keys: /{key}")
        return self.data[key]

    def check(self, keys: list[str]) -> bool:
        for k in keys:
            self._hit(k)
        return all(k in self.data for k in keys)

    def wait(self, keys: list[str], timeout: object = None) -> None:
        if not self.check(keys):
            raise WAIT_TIMEOUT


class Prefixed:
    def __init__(self, prefix: str, store: Any) -> None:
        self.prefix, self.store = prefix, store

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.store, name)

        def call(key: Any, *args: Any) -> Any:
            if isinstance(key, list):
                return method([f"{self.prefix}/{k}" for k in key], *args)
            return method(f"{self.prefix}/{key}", *args)
        return call


def fake_dist(store: FakeStore | Exception) -> Any:
    def rendezvous(url: str, rank: int, world: int, timeout: object = None) -> Any:
        if isinstance(store, Exception):
            raise store
        yield store, rank, world

    return types.SimpleNamespace(rendezvous=rendezvous, PrefixStore=Prefixed, is_initialized=lambda: False)


def launcher(rank: int, world: int = 4, local_world: int = 2) -> dict[str, str]:
    return {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank % local_world),
            "GROUP_RANK": str(rank // local_world), "LOCAL_WORLD_SIZE": str(local_world),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29999"}


def sent(rank: int, *, local_world: int = 2, facts: str | None = None) -> bytes:
    """What rank `rank` posts: its node's facts (local rank 0) or its launch variables."""
    node = rank // local_world
    doc: dict[str, Any] = {"host": socket.gethostname() if node == 0 else f"host{node}", "group_rank": str(rank // local_world),
                           "local_rank": rank % local_world, "local_world": str(local_world), "seconds": 0.1}
    if rank % local_world == 0:
        doc["facts"] = facts if facts is not None else dump_facts(facts_with(torch="2.5.1+cu124"))
    else:
        doc["launch"] = {"launcher": "torchrun", "accelerate": None, "env": {}, "shm_bytes": 2**30, "container": None}
    return json.dumps(doc).encode()


def gather(rank: int, store: FakeStore | Exception, timeout: float = 0.3) -> Gathered | Departed | None:
    return gather_torch(lambda: facts_with(torch="2.5.1+cu124"), timeout=timeout, environ=launcher(rank),
                        dist=fake_dist(store))


def states(gathered: Gathered | Departed | None) -> list[tuple[int | None, str]]:
    assert isinstance(gathered, Gathered)
    return [(m.rank, m.state.value) for m in gathered.members]


def test_an_unreachable_store_gives_rank_0_a_report_with_every_other_rank_silent():
    gathered = gather(0, UNREACHABLE)
    assert states(gathered) == [(0, "ok"), (1, "timed-out"), (2, "timed-out"), (3, "timed-out")]
    assert isinstance(gathered, Gathered)
    detail = gathered.members[1].detail or ""
    assert detail.startswith("the launcher's store at 127.0.0.1:29999 could not be reached: DistNetworkError: The client")
    assert "\n" not in detail and "frame #" not in detail


@pytest.mark.parametrize("error", [UNREACHABLE, REFUSED, ValueError("environment variable MASTER_ADDR expected")])
def test_an_unreachable_store_lets_another_rank_leave_with_a_reason(error):
    gathered = gather(2, error)
    assert isinstance(gathered, Departed) and gathered.rank == 2
    assert type(error).__name__ in gathered.reason and "\n" not in gathered.reason


def test_a_dead_or_hung_rank_is_timed_out_and_the_others_are_reported():
    store = FakeStore({f"compat-fleet/facts/{r}": sent(r) for r in (1, 2)})  # rank 3 never posts
    assert states(gather(0, store)) == [(0, "ok"), (1, "ok"), (2, "ok"), (3, "timed-out")]


def test_a_store_that_dies_mid_gather_keeps_what_arrived():
    store = FakeStore({f"compat-fleet/facts/{r}": sent(r) for r in (1, 2, 3)},
                      broken={"compat-fleet/facts/2": REFUSED})
    gathered = gather(0, store)
    assert states(gathered) == [(0, "ok"), (1, "timed-out"), (2, "timed-out"), (3, "timed-out")]
    assert isinstance(gathered, Gathered)
    assert "failed: DistNetworkError: Connection reset by peer" in (gathered.members[2].detail or "")


def test_rank_0_gone_lets_the_other_ranks_leave():
    gathered = gather(1, FakeStore())  # nobody ever posts "present"
    assert isinstance(gathered, Departed) and "DistStoreError: wait timeout" in gathered.reason


@pytest.mark.parametrize("answer", [
    b"not json", b"[]", b'{"host": 3}', b'{"host": "h", "local_rank": ' + HUGE.encode() + b"}", b"{" * 50_000,
    sent(2, facts=dump_facts(facts_with(packages={"trl": HUGE}))),
    sent(2, facts="{"),
])
def test_a_rank_answering_garbage_is_failed_with_the_reason(answer):
    store = FakeStore({"compat-fleet/facts/1": sent(1), "compat-fleet/facts/2": answer, "compat-fleet/facts/3": sent(3)})
    gathered = gather(0, store)
    assert isinstance(gathered, Gathered)
    by_rank = {m.rank: m for m in gathered.members}
    assert by_rank[0].state is MemberState.OK and by_rank[1].state is MemberState.OK
    assert by_rank[2].state is MemberState.FAILED and by_rank[2].detail and HUGE not in by_rank[2].detail
    # Rank 3 shares rank 2's node: without its node's facts it is failed too, with that reason.
    assert by_rank[3].state is MemberState.FAILED


# ------------------------------------------------------------------ python -m compat.fleet


def fleet_module(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "LOCAL_", "MASTER_",
                                                                       "SLURM_", "OMPI_", "TORCHELASTIC_"))}
    full = {**keep, "PYTHONPATH": str(REPO), **env}  # the run's private cache, as tests/fault/fakes.py's compat_cli
    return subprocess.run([sys.executable, "-m", "compat.fleet", *args], capture_output=True, timeout=timeout,
                          env=full, input=b"")


@pytest.mark.parametrize(("env", "args", "says"), [
    ({}, (), "runs under a launcher"),
    ({"RANK": "0", "WORLD_SIZE": "1"}, (), "MASTER_ADDR and MASTER_PORT not set"),
    ({**launcher(0), "MASTER_PORT": "notaport"}, (), "MASTER_PORT='notaport'"),
    ({**launcher(0), "MASTER_PORT": "70000"}, (), "not a TCP port"),
    ({**launcher(0), "WORLD_SIZE": HUGE}, (), "WORLD_SIZE='99999999999999999999…'"),
    ({**launcher(0), "RANK": "-1"}, (), "RANK='-1'"),
    ({**launcher(0), "RANK": "4"}, (), "a rank is 0 to WORLD_SIZE - 1"),
    ({**launcher(0), "LOCAL_RANK": "\u0661"}, (), "LOCAL_RANK"),
    (launcher(0), ("--bogus",), "No such option: --bogus"),
    (launcher(0), ("--timeout", HUGE), "--timeout"),
    (launcher(0), ("--baseline", "/nonexistent-compat-dir"), "is not a directory"),
])
def test_python_m_compat_fleet_fails_in_one_line(env, args, says):
    result = fleet_module(*args, env=env)
    assert result.returncode == 2, result.stderr[-500:]
    assert says in one_line_error(result)


@pytest.mark.needs_torch
def test_a_rank_that_cannot_reach_the_store_says_so_in_one_line_and_exits_0():
    """Exit 0: a non-zero exit would make torchrun stop every rank, rank 0's report included."""
    port = _closed_port()
    result = fleet_module("--timeout", "1", env={**launcher(1), "MASTER_PORT": str(port)}, timeout=60)
    assert result.returncode == 0, result.stderr[-800:]
    line = one_line_error(result)
    assert line.startswith(f"compat: warning: rank 1: the launcher's store at 127.0.0.1:{port} could not be reached")


@pytest.mark.slow  # a rank in a child that imports torch and waits out --timeout
@pytest.mark.needs_torch
def test_rank_0_reports_when_the_agent_store_is_gone(tmp_path):
    """Under torchrun rank 0 is a client of the agent's store: when the agent is gone it still reports."""
    port, out = _closed_port(), tmp_path / "report.json"
    env = {**launcher(0), "MASTER_PORT": str(port), "TORCHELASTIC_USE_AGENT_STORE": "True"}
    result = fleet_module("--timeout", "1", "--json", "-o", str(out), env=env, timeout=90)
    assert result.returncode == 1, result.stderr[-800:]
    assert "Traceback" not in result.stderr.decode()
    doc = json.loads(out.read_text())
    assert [m["state"] for m in doc["missing"]] == ["timed-out"] * 3
    assert all("could not be reached" in m["detail"] for m in doc["missing"])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow  # a rank in a child that imports torch and waits for torch's store to give up
@pytest.mark.needs_torch
def test_a_rank_that_never_started_is_named_by_the_real_store(tmp_path):
    """Rank 0 hosts the store (no torchrun agent) and rank 1 is dead: torch's TCPStore gives up
    waiting for it, and rank 0 reports rank 1 silent with torch's own reason."""
    out = tmp_path / "report.json"
    env = {**launcher(0, world=2, local_world=1), "MASTER_PORT": str(_closed_port())}
    result = fleet_module("--timeout", "2", "--json", "-o", str(out), env=env, timeout=90)
    assert result.returncode == 1, result.stderr[-800:]
    assert "Traceback" not in result.stderr.decode()
    (missing,) = json.loads(out.read_text())["missing"]
    assert missing["member"] == "rank-1[rank 1]" and missing["state"] == "timed-out"
    assert "could not be reached: DistStoreError: Timed out" in missing["detail"]
