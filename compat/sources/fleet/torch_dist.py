"""`torchrun ... -m compat.fleet`: every rank's facts over torch.distributed, rank 0 gets them all.

The launcher's store (the one `env://` rendezvous connects to) is the liveness channel: each rank
posts its facts there, and rank 0 waits for them with a deadline, so a rank that hangs or died is
named instead of hanging everyone. With `--smoke`, when every rank answered, rank 0 posts the node
layout, the ranks form a gloo process group (the mesh a job's CPU collectives use) and a short
all-reduce runs on the job's real backend, once over all ranks and once per pair of nodes. Facts
never travel by collective: `all_gather_object` needs numpy, which compat does not.
A collective never blocks the caller past its bound: it runs in a daemon thread that is left
behind when it hangs (the process then exits without waiting for it).

Only local rank 0 of a node probes everything; the other ranks send their launch variables and
share their node's facts (the same interpreter and GPUs, but their own CUDA_VISIBLE_DEVICES).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from compat.errors import CompatError, UsageError
from compat.model import codec
from compat.model.facts import Facts, Launch, dump_facts
from compat.model.fleet import Member, MemberState, PairTiming, RankTiming, Smoke
from compat.sources.fleet.snapshot import read_snapshot
from compat.sources.probe.launch import probe_launch

MAX_PAIRS = 64
"""Pairs of nodes the smoke test measures at most (the first ones in node order)."""
_POLL = 0.05

STORE_ERRORS: tuple[type[Exception], ...] = (RuntimeError, OSError, ValueError)
"""What the launcher's store, rendezvous and a collective raise when a peer, the store or the network
fails: torch.distributed's DistError family (DistStoreError, DistNetworkError, DistBackendError) and a
collective's failure are RuntimeErrors; TimeoutError and ConnectionError are OSErrors; rendezvous
raises ValueError for a missing or malformed MASTER_ADDR, and json does for a torn value in the store.
Each is a rank's answer, never a crash of the job; anything else is a bug in compat and keeps its traceback."""


@dataclass(frozen=True, kw_only=True)
class Gathered:
    """What rank 0 holds after the gather."""

    members: tuple[Member, ...]
    """Every rank, answered or not."""
    world_size: int
    """The launcher's world size."""
    smoke: Smoke | None
    """The smoke test, when asked for and every rank answered."""


# (rank, world size, local rank, node rank, ranks per node) as torchrun, srun and Open MPI's mpirun name them.
_LAUNCHER_VARS = (
    ("RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS_PER_NODE"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_NODE_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
)


def launcher_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment with RANK, WORLD_SIZE, LOCAL_RANK, GROUP_RANK and LOCAL_WORLD_SIZE set from whichever
    launcher set its own (srun and mpirun do not set torch's names)."""
    env = dict(environ)
    for names in _LAUNCHER_VARS:
        if names[0] in env and names[1] in env:
            for torch_name, own in zip(_LAUNCHER_VARS[0], names, strict=True):
                if own in env:
                    env.setdefault(torch_name, env[own])
            break
    return env


_MAX_WORLD = 1 << 20
"""Ranks a job may have: more is a launcher variable out of shape, not a job."""


def launcher_rank(environ: Mapping[str, str]) -> tuple[int, int, int]:
    """RANK, WORLD_SIZE and LOCAL_RANK as the launcher set them; a UsageError without a launcher or
    with values out of shape."""
    if not environ.get("RANK") or not environ.get("WORLD_SIZE"):
        raise UsageError(_NO_LAUNCHER)
    rank, world, local = (_small_int(environ, n, default) for n, default in (("RANK", None), ("WORLD_SIZE", None),
                                                                             ("LOCAL_RANK", "0")))
    if not 1 <= world <= _MAX_WORLD or rank >= world:
        raise UsageError(f"the launcher set RANK={rank} and WORLD_SIZE={world}: a rank is 0 to WORLD_SIZE - 1")
    return rank, world, local


def this_rank() -> tuple[int, int, int]:
    """This process's (rank, world size, local rank) from its launcher's variables; a UsageError without a launcher."""
    return launcher_rank(launcher_env(os.environ))


def store_address(environ: Mapping[str, str]) -> str:
    """MASTER_ADDR:MASTER_PORT, which torch's env:// rendezvous reads; a UsageError when missing or out of shape."""
    missing = [n for n in ("MASTER_ADDR", "MASTER_PORT") if not environ.get(n)]
    if missing:
        raise UsageError(f"{' and '.join(missing)} not set: {_NO_LAUNCHER}")
    port = _small_int(environ, "MASTER_PORT", None)
    if not 1 <= port <= 65535:
        raise UsageError(f"the launcher set MASTER_PORT={port}, which is not a TCP port")
    return f"{environ['MASTER_ADDR']}:{port}"


_NO_LAUNCHER = ("python -m compat.fleet runs under a launcher (torchrun, srun, mpirun) that sets RANK, WORLD_SIZE, "
                "MASTER_ADDR and MASTER_PORT; outside one, use `compat fleet DIR`, --slurm or --ray")


def _small_int(environ: Mapping[str, str], name: str, default: str | None) -> int:
    text = environ.get(name, default) or ""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise UsageError(f"the launcher set {name}={shown!r}, which is not a small non-negative integer")
    return int(text)


@dataclass(frozen=True, kw_only=True)
class Departed:
    """A rank other than 0 that could not take part: why (rank 0 reports it as silent)."""

    rank: int
    """Its global rank."""
    reason: str
    """What torch.distributed said, in one line."""


def _why(exc: BaseException) -> str:
    """torch.distributed's error in one line (its messages carry C++ frames and blank lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def gather_torch(
    probe_facts: Callable[[], Facts],
    *,
    timeout: float,
    smoke: bool = False,
    smoke_bytes: int = 8 * 2**20,
    smoke_timeout: float = 30.0,
    environ: Mapping[str, str] | None = None,
    dist: Any = None,
) -> Gathered | Departed | None:
    """Gather every rank's facts; rank 0 returns them, the other ranks None (or why they left early).

    The store is the launcher's: when it cannot be reached or dies, rank 0 still reports (itself,
    and every other rank as silent with the reason), and the other ranks leave without a traceback.
    `dist` stands for torch.distributed in tests."""
    env = launcher_env(os.environ if environ is None else environ)
    rank, world, local_rank = launcher_rank(env)
    where = store_address(env)
    if dist is None:
        # c10d logs every failed connect with its C++ frames; compat reports the failure in one line
        # itself. A level the user set is kept.
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Failed to initialize NumPy": compat needs no numpy
                import torch.distributed as dist
        except ImportError as exc:
            raise UsageError("python -m compat.fleet needs torch (torch.distributed) in this environment") from exc
    try:
        store, rank, world = next(dist.rendezvous("env://", rank, world, timeout=timedelta(seconds=timeout)))
        store = dist.PrefixStore("compat-fleet", store)
    except STORE_ERRORS as exc:  # no store: unreachable, refused, or the launcher's agent is gone
        reason = f"the launcher's store at {where} could not be reached: {_why(exc)}"
        if rank != 0:
            return Departed(rank=rank, reason=reason)
        own = _payload(probe_facts, env, local_rank)
        return Gathered(members=_members({0: own}, world, timeout, silent=reason), world_size=world, smoke=None)
    payload = _payload(probe_facts, env, local_rank)
    lost: str | None = None
    payloads: dict[int, str] = {}
    arrived: set[int] = set()
    try:
        store.set(f"facts/{rank}", payload)
        if rank == 0:
            arrived = _wait_keys(store, [f"facts/{r}" for r in range(world)], deadline=time.monotonic() + timeout)
            store.set("present", json.dumps(sorted(arrived)))
        else:
            store.wait(["present"], timedelta(seconds=2 * timeout + 30))
            arrived = set(json.loads(store.get("present")))
        if rank == 0:
            for r in sorted(arrived):
                payloads[r] = store.get(f"facts/{r}").decode("utf-8", "replace")
    except STORE_ERRORS as exc:  # the store died or rank 0 never answered: a rank's answer, not a crash of the job
        if rank != 0:
            _finish(dist)
            return Departed(rank=rank, reason=f"the store at {where} failed: {_why(exc)}")
        lost = f"the store at {where} failed: {_why(exc)}"
        payloads[0] = payload  # what the other ranks sent before it failed is kept
        arrived = set(payloads)
    smoke_result: Smoke | None = None
    if smoke and lost is None and len(arrived) == world:
        try:
            smoke_result = _smoke(dist, store, rank, world, local_rank, payloads, smoke_bytes, smoke_timeout)
        except (RuntimeError, OSError, ValueError, TypeError, LookupError) as exc:
            # the store failed under the smoke test, or a rank posted a torn timing: the facts are still reported
            smoke_result = Smoke(backend="gloo", size_bytes=smoke_bytes, timeout_s=smoke_timeout, ranks=(), pairs=(),
                                 error=f"the store at {where} failed: {_why(exc)}") if rank == 0 else None
    if rank != 0:
        _finish(dist)
        return None
    members = _members(payloads, world, timeout, silent=lost)
    _finish(dist)
    return Gathered(members=members, world_size=world, smoke=smoke_result)


def _payload(probe_facts: Callable[[], Facts], env: Mapping[str, str], local_rank: int) -> str:
    started = time.monotonic()
    doc: dict[str, Any] = {"host": socket.gethostname(), "group_rank": env.get("GROUP_RANK"), "local_rank": local_rank,
                           "local_world": env.get("LOCAL_WORLD_SIZE")}
    try:
        if local_rank == 0:
            doc["facts"] = dump_facts(probe_facts())
        else:
            doc["launch"] = codec.encode(probe_launch(None, environ=env))
    except (CompatError, OSError) as exc:  # a probe that fails on this rank is this rank's answer, not a crash of the job
        # (a bug in compat is not caught: its traceback is on this rank's stderr and the launcher names the rank)
        doc["error"] = f"{type(exc).__name__}: {exc}"
    doc["seconds"] = round(time.monotonic() - started, 3)
    return json.dumps(doc, sort_keys=True)


def _wait_keys(store: Any, keys: list[str], *, deadline: float) -> set[int]:
    """The ranks whose key is set by the deadline."""
    waiting = set(keys)
    while waiting and time.monotonic() < deadline:
        waiting = {k for k in waiting if not store.check([k])}
        if waiting:
            time.sleep(_POLL)
    return {int(k.rsplit("/", 1)[1]) for k in keys if k not in waiting}


def _bounded(fn: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
    """Run `fn` in a daemon thread: (finished, result or the exception it raised)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(fn())
        except STORE_ERRORS as exc:
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True, name="compat-fleet-collective")
    thread.start()
    thread.join(timeout)
    return (bool(box), box[0] if box else None)


def _form_group(dist: Any, store: Any, rank: int, world: int, timeout: float) -> str | None:
    """Form the default gloo process group within the bound: None, or why it did not form."""

    def form() -> None:
        dist.init_process_group("gloo", store=dist.PrefixStore("pg", store), rank=rank, world_size=world,
                                timeout=timedelta(seconds=timeout))
        dist.barrier()

    done, result = _bounded(form, timeout + 5)
    if not done:
        return f"the gloo process group did not form within {timeout + 5:g} s"
    if isinstance(result, Exception):
        return f"the gloo process group did not form: {type(result).__name__}: {result}"
    return None


def _docs(payloads: Mapping[int, str]) -> dict[int, dict[str, Any] | str]:
    """Each rank's payload as a document, or why it cannot be read (a rank of another compat, a torn value)."""
    docs: dict[int, dict[str, Any] | str] = {}
    for r, text in payloads.items():
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            docs[r] = f"its answer is not JSON: {' '.join(str(exc).split())[:200]}"
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("host"), str) or not isinstance(doc.get("local_rank"), int):
            docs[r] = "its answer is not the document compat.fleet sends (another version of compat?)"
            continue
        docs[r] = doc
    return docs


def _layout(payloads: Mapping[int, str]) -> dict[str, list[int]]:
    """Node name -> its ranks, from the hosts and node ranks the ranks reported (a rank whose answer
    cannot be read is a node of its own, `rank-N`)."""
    keys: dict[int, tuple[str, str]] = {}
    for r, doc in _docs(payloads).items():
        keys[r] = (doc["host"][:200], str(doc.get("group_rank"))[:20]) if isinstance(doc, dict) else (f"rank-{r}", "")
    hosts: dict[str, set[str]] = {}
    for host, group in keys.values():
        hosts.setdefault(host, set()).add(group)
    layout: dict[str, list[int]] = {}
    for r in sorted(keys):
        host, group = keys[r]
        # One host running two launchers' nodes (a test, containers sharing a host name) stays two nodes.
        name = host if len(hosts[host]) == 1 else f"{host}#{group}"
        layout.setdefault(name, []).append(r)
    return layout


def _smoke(dist: Any, store: Any, rank: int, world: int, local_rank: int, payloads: Mapping[int, str],
           size: int, timeout: float) -> Smoke | None:
    """Every rank runs the all-reduces; rank 0 collects the timings from the store with a deadline.

    Rank 0 holds every payload and posts the node layout; the other ranks read it from the store."""
    import torch

    if rank == 0:
        layout = _layout(payloads)
        store.set("layout", json.dumps(layout, sort_keys=True))
    else:
        try:
            store.wait(["layout"], timedelta(seconds=timeout))
        except STORE_ERRORS:  # rank 0 is gone or late: it reports the smoke test, this rank has nothing to add
            return None
        layout = json.loads(store.get("layout"))
    error = _form_group(dist, store, rank, world, timeout)
    if error is not None:
        return Smoke(backend="gloo", size_bytes=size, timeout_s=timeout, ranks=(), pairs=(),
                     error=error) if rank == 0 else None
    nodes = sorted(layout)
    use_nccl = torch.cuda.is_available() and dist.is_nccl_available()
    backend = "nccl" if use_nccl else "gloo"
    device = torch.device("cuda", local_rank) if use_nccl else torch.device("cpu")
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]][:MAX_PAIRS]

    def run() -> None:
        if use_nccl:
            torch.cuda.set_device(device)
        group = dist.new_group(backend=backend, timeout=timedelta(seconds=timeout))
        # new_group is collective: every rank creates every pair's group, in the same order.
        pair_groups = [(a, b, dist.new_group([layout[a][0], layout[b][0]], backend=backend,
                                             timeout=timedelta(seconds=timeout))) for a, b in pairs]
        tensor = torch.ones(size // 4, dtype=torch.float32, device=device)
        dist.all_reduce(tensor, group=group)  # warm-up: connections are set up on first use
        _sync(torch, use_nccl)
        started = time.perf_counter()
        dist.all_reduce(tensor, group=group)
        _sync(torch, use_nccl)
        store.set(f"smoke/rank/{rank}", json.dumps({"seconds": time.perf_counter() - started}))
        for a, b, pg in pair_groups:
            if rank not in (layout[a][0], layout[b][0]):
                continue
            try:
                dist.all_reduce(tensor, group=pg)
                _sync(torch, use_nccl)
                started = time.perf_counter()
                dist.all_reduce(tensor, group=pg)
                _sync(torch, use_nccl)
                result: dict[str, Any] = {"seconds": time.perf_counter() - started}
            except STORE_ERRORS as exc:
                result = {"error": f"{type(exc).__name__}: {exc}"}
            if rank == layout[a][0]:
                store.set(f"smoke/pair/{a}/{b}", json.dumps(result))

    _, error = _bounded(run, timeout)
    if isinstance(error, Exception):
        store.set(f"smoke/rank/{rank}", json.dumps({"error": f"{type(error).__name__}: {error}"}))
    if rank != 0:
        return None
    deadline = time.monotonic() + timeout
    node_of = {r: n for n, rs in layout.items() for r in rs}
    timings = _collect(store, [f"smoke/rank/{r}" for r in range(world)], deadline)
    ranks = tuple(
        RankTiming(rank=r, node=node_of.get(r, "?"), seconds=_seconds(timings.get(f"smoke/rank/{r}")),
                   error=_error(timings.get(f"smoke/rank/{r}"), timeout))
        for r in range(world)
    )
    measured = _collect(store, [f"smoke/pair/{a}/{b}" for a, b in pairs], deadline)
    pair_timings = []
    for a, b in pairs:
        doc = measured.get(f"smoke/pair/{a}/{b}")
        secs = _seconds(doc)
        pair_timings.append(PairTiming(a=a, b=b, seconds=secs, bus_gbps=round(size / secs / 1e9, 3) if secs else None,
                                       error=_error(doc, timeout)))
    return Smoke(backend=backend, size_bytes=size, timeout_s=timeout, ranks=ranks, pairs=tuple(pair_timings))


def _sync(torch: Any, cuda: bool) -> None:
    if cuda:
        torch.cuda.synchronize()


def _collect(store: Any, keys: list[str], deadline: float) -> dict[str, dict[str, Any]]:
    waiting = set(keys)
    out: dict[str, dict[str, Any]] = {}
    while True:
        for k in sorted(waiting):
            if store.check([k]):
                out[k] = json.loads(store.get(k))
        waiting -= set(out)
        if not waiting or time.monotonic() >= deadline:
            return out
        time.sleep(_POLL)


def _seconds(doc: dict[str, Any] | None) -> float | None:
    if doc is None or "seconds" not in doc:
        return None
    return round(float(doc["seconds"]), 6)


def _error(doc: dict[str, Any] | None, timeout: float) -> str | None:
    if doc is None:
        return f"no result within {timeout:g} s"
    return str(doc["error"]) if "error" in doc else None


def _finish(dist: Any) -> None:
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except STORE_ERRORS:
            pass  # leaving is best effort: the report is what matters


def _members(payloads: Mapping[int, str], world: int, timeout: float, *, silent: str | None = None) -> tuple[Member, ...]:
    """Rank 0's view: every rank's Member; a non-zero local rank shares its node's facts with its own launch.

    A rank without a payload is TIMED_OUT (`silent` says why, when the store failed); one whose
    payload or facts cannot be read is FAILED with the reason: never an exception for the others."""
    layout = _layout(payloads)
    node_of = {r: n for n, rs in layout.items() for r in rs}
    docs = _docs(payloads)
    node_facts: dict[str, Facts | str] = {}
    for r, sent in docs.items():
        if isinstance(sent, dict) and sent.get("facts"):
            text = sent["facts"] if isinstance(sent["facts"], str) else json.dumps(sent["facts"])
            node_facts[node_of[r]] = read_snapshot(text, origin=f"rank {r}")
    group_node = {str(d.get("group_rank")): node_of[r] for r, d in docs.items() if isinstance(d, dict)}
    sizes = [int(d["local_world"]) for d in docs.values()
             if isinstance(d, dict) and str(d.get("local_world") or "").isdigit() and len(str(d["local_world"])) <= 9]
    local_ranks = [d["local_rank"] for d in docs.values() if isinstance(d, dict) and 0 <= d["local_rank"] < _MAX_WORLD]
    local_world = max(sizes) if sizes else max(local_ranks, default=0) + 1
    members: list[Member] = []
    for r in range(world):
        doc = docs.get(r)
        if doc is None:
            # torchrun numbers ranks node by node: a silent rank belongs to node r // local world size.
            node = group_node.get(str(r // max(local_world, 1)), f"rank-{r}")
            members.append(Member(node=node, rank=r, state=MemberState.TIMED_OUT,
                                  detail=silent or f"no facts within {timeout:g} s"))
            continue
        if isinstance(doc, str):
            members.append(Member(node=node_of[r], rank=r, state=MemberState.FAILED, detail=doc))
            continue
        node, local = node_of[r], int(doc["local_rank"])
        seconds = doc.get("seconds")
        common: dict[str, Any] = {
            "node": node, "rank": r, "local_rank": local,
            "seconds": float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None,
        }
        facts = node_facts.get(node)
        if "error" in doc:
            members.append(Member(**common, state=MemberState.FAILED, detail=" ".join(str(doc["error"]).split())[:500]))
        elif isinstance(facts, str):
            members.append(Member(**common, state=MemberState.FAILED, detail=facts))
        elif facts is None:
            members.append(Member(**common, state=MemberState.FAILED, detail="its node's local rank 0 sent no facts"))
        elif doc.get("facts"):
            members.append(Member(**common, facts=facts))
        else:
            try:
                launch = codec.decode(Launch, doc.get("launch"))
            except (codec.DecodeError, RecursionError) as exc:
                members.append(Member(**common, state=MemberState.FAILED, detail=f"its launch variables: {exc}"[:500]))
            else:
                members.append(Member(**common, facts=dataclasses.replace(facts, launch=launch)))
    return tuple(members)
