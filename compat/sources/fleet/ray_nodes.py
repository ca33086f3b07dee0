"""`compat fleet --ray ADDRESS`: a facts task pinned to every alive node of a Ray cluster."""

from __future__ import annotations

import logging
import socket
import sys
import time
from pathlib import Path
from typing import Any

from compat.errors import UsageError
from compat.model.fleet import Member, MemberState
from compat.sources.fleet.snapshot import read_snapshot


def node_facts(timeout: float) -> tuple[str, str, float]:
    """Runs on the node: its host name, its facts as JSON, and the seconds they took."""
    from compat.matrix import load_matrix
    from compat.model.facts import dump_facts
    from compat.sources.probe import ProbeRequest, probe

    started = time.monotonic()
    # The interpreter this task runs in is the one the cluster's jobs run in: judge it, not a guess.
    facts = probe(ProbeRequest(python=Path(sys.executable), timeout=timeout), load_matrix(()))
    return socket.gethostname(), dump_facts(facts), time.monotonic() - started


def gather_ray(address: str, *, timeout: float) -> list[Member]:
    """One member per alive node; a task that does not finish within `timeout` is a TIMED_OUT member."""
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError as exc:
        raise UsageError("--ray needs the ray package in this environment (pip install ray)") from exc
    _reachable(address, timeout=min(timeout, 10.0))
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
    except (ray.exceptions.RayError, ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        # ConnectionError or TimeoutError for a cluster that does not answer; RuntimeError, ValueError
        # or Ray's own errors for a bad address or a version that does not match the cluster's.
        raise UsageError(f"cannot connect to the Ray cluster at {address}: {exc}") from exc
    try:
        alive = sorted((n for n in ray.nodes() if n.get("Alive")), key=lambda n: n["NodeID"])
        task = ray.remote(num_cpus=0, max_retries=0)(node_facts)
        refs: dict[Any, dict[str, Any]] = {}
        for node in alive:
            strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
            refs[task.options(scheduling_strategy=strategy).remote(min(timeout, 10.0))] = node
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        done = set(ready)
        hosts = [n.get("NodeManagerHostname") or n["NodeManagerAddress"] for n in alive]
        members = []
        for ref, node in refs.items():
            name = _name(node, hosts)
            if ref not in done:
                ray.cancel(ref, force=True)
                members.append(Member(node=name, state=MemberState.TIMED_OUT, detail=f"no facts within {timeout:g} s"))
                continue
            try:
                _, text, seconds = ray.get(ref, timeout=timeout)
            except ray.exceptions.RayError as exc:  # the task raised (RayTaskError), or its worker or node died
                lines = str(exc).strip().splitlines() or [type(exc).__name__]
                members.append(Member(node=name, state=MemberState.FAILED, detail=lines[-1]))
                continue
            facts = read_snapshot(str(text), origin=name)
            if isinstance(facts, str):
                members.append(Member(node=name, state=MemberState.FAILED, detail=facts))
            else:
                members.append(Member(node=name, facts=facts, seconds=round(float(seconds), 3)))
        return members
    finally:
        ray.shutdown()


def _reachable(address: str, *, timeout: float) -> None:
    """ray.init waits minutes on an address where nothing listens: check the GCS port first, within `timeout`."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", "ray://...": Ray's own lookup
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address}: {exc.strerror or exc}") from exc


def _name(node: dict[str, Any], hosts: list[str]) -> str:
    host = node.get("NodeManagerHostname") or node["NodeManagerAddress"]
    # Several Ray nodes on one host (a test cluster, containers sharing a host name) stay apart.
    return host if hosts.count(host) == 1 else f"{host}-{node['NodeID'][:8]}"
