"""`compat fleet`: every node's facts gathered (a directory, srun, Ray, torch.distributed), judged one by one
and against each other."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from compat.api.environment import matrix_for, read_config
from compat.api.requests import FleetRequest
from compat.errors import UsageError
from compat.model.facts import Facts
from compat.model.findings import Severity
from compat.model.fleet import FleetReport
from compat.model.fleet import Member as FleetMember


def fleet(request: FleetRequest) -> FleetReport:
    """Every node's facts (from a directory, srun or Ray), judged one by one and against each other."""
    from compat.judge.fleet import judge_fleet
    from compat.sources.fleet.directory import read_members

    modes = [m for m, on in (("DIR", request.directory is not None), ("--slurm", request.slurm), ("--ray", request.ray))
             if on]
    if len(modes) != 1:
        raise UsageError("name one source of facts: DIR, --slurm or --ray" if not modes else f"give one of {', '.join(modes)}")
    if request.node_smoke and request.ray:
        raise UsageError("--smoke runs `compat smoke` on the nodes of DIR (their saved reports) or --slurm, not --ray")
    m = matrix_for(request.matrix, request.settings)
    world = request.world_size
    baseline = read_members(request.baseline) if request.baseline is not None else None  # said before gathering
    if request.directory is not None:
        members = read_members(request.directory)
    elif request.slurm:
        from compat.sources.fleet.slurm import gather_slurm

        members, ntasks = gather_slurm(request.out, timeout=request.timeout)
        world = world or ntasks
    else:
        from compat.sources.fleet.ray_nodes import gather_ray

        members = gather_ray(request.ray or "", timeout=request.timeout)
        _save_members(members, request.out)
    config = read_config(request.config, find=request.find_config)
    fail_on = request.fail_on or (config.fail_on if config else None) or Severity.ERROR
    strict = request.strict or (config.strict if config else False)
    report = judge_fleet(members, m, world_size=world, baseline=baseline, fail_on=fail_on, strict=strict)
    return _with_node_smoke(report, request, members) if request.node_smoke else report


def _with_node_smoke(report: FleetReport, request: FleetRequest, members: list[FleetMember]) -> FleetReport:
    """`compat fleet --smoke`: every node's `compat smoke` report (saved beside the facts, or run now by srun)."""
    from compat.smoke.nodes import node_smoke, with_node_smoke
    from compat.sources.fleet.smoke import SUBDIR, read_node_smoke

    expected = sorted({mb.node for mb in members if mb.facts is not None})
    if request.directory is not None:
        found = read_node_smoke(request.directory)
        if not found:
            raise UsageError(f"--smoke: {request.directory / SUBDIR} holds no smoke reports; write them first with "
                             f"`srun --ntasks-per-node=1 compat smoke --json -o {request.directory / SUBDIR}/%N.json`")
        problem = "no smoke report from this node"
    else:
        from compat.sources.fleet.slurm import slurm_out_dir
        from compat.sources.fleet.smoke import run_slurm_smoke

        # Each node gathers its facts (bounded by --timeout) before its stages spend their budget.
        found, said = run_slurm_smoke(slurm_out_dir(request.out), timeout=request.node_smoke_budget + request.timeout,
                                      budget=request.node_smoke_budget)
        problem = f"no smoke report from this node ({said})" if said else "no smoke report from this node"
    nodes = [node_smoke(name, got) for name, got in found]
    nodes += [node_smoke(name, problem) for name in expected if name not in {n for n, _ in found}]
    return with_node_smoke(report, nodes)


def fleet_torch(request: FleetRequest) -> FleetReport | str | None:
    """Under a launcher (torchrun): gather every rank's facts; rank 0 gets the report, the others None,
    or a line saying why they could not take part (the store unreachable or gone; rank 0 reports them)."""
    import sys

    from compat.judge.fleet import judge_fleet
    from compat.sources.fleet.torch_dist import Departed, gather_torch, this_rank
    from compat.sources.probe import ProbeRequest, probe

    baseline = _baseline_members(request.baseline)  # a wrong --baseline is said before anyone waits on the store
    rank, _, local_rank = this_rank()
    # Only the ranks that probe (a node's local rank 0) or judge (rank 0) read the matrix: a node's other ranks send
    # their launch variables alone, and each of them parsed the matrix at start (0.2 s of CPU without a cache).
    m = matrix_for(request.matrix, request.settings) if rank == 0 or local_rank == 0 else None
    # Every rank runs compat.fleet in the job's own interpreter: that one is judged, not a guess at another.
    python = Path(sys.executable)

    def probe_facts() -> Facts:
        assert m is not None, "only a node's local rank 0 probes"
        return probe(ProbeRequest(
            python=python, timeout=min(request.timeout, 30.0), cache_dir=request.settings.cache_dir,
            torch_timeout=request.settings.torch_timeout,
            load_torch=request.settings.torch_load,
        ), m)

    gathered = gather_torch(
        probe_facts,
        timeout=request.timeout, smoke=request.smoke, smoke_bytes=request.smoke_bytes, smoke_timeout=request.smoke_timeout,
    )
    if gathered is None:
        return None
    if isinstance(gathered, Departed):
        return f"rank {gathered.rank}: {gathered.reason} (rank 0 reports this rank as silent)"
    _save_members(gathered.members, request.out)
    assert m is not None, "rank 0 read the matrix"
    return judge_fleet(gathered.members, m, world_size=gathered.world_size, smoke=gathered.smoke,
                       baseline=baseline, fail_on=request.fail_on or Severity.ERROR, strict=request.strict)


def _baseline_members(path: Path | None) -> list[FleetMember] | None:
    from compat.sources.fleet.directory import read_members

    return read_members(path) if path is not None else None


def _save_members(members: Iterable[FleetMember], out: Path | None) -> None:
    """One facts file per member (NODE.json, or NODE.rank-N.json where ranks differ), for a later --baseline."""
    from compat.atomic import write_output
    from compat.model.facts import dump_facts
    from compat.redact import redact_text

    if out is None:
        return
    for member in members:
        if member.facts is None or (member.local_rank or 0) != 0:
            continue  # a node's other ranks share its facts
        try:
            write_output(out / f"{member.node}.json", redact_text(dump_facts(member.facts)).encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot write {out / member.node}.json: {exc.strerror or exc}") from exc
