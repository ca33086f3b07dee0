"""`compat fleet --slurm`: inside an allocation, srun runs `compat facts` once per node into a shared directory."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from compat.errors import UsageError
from compat.model.fleet import Member, MemberState
from compat.sources.fleet.directory import read_members
from compat.sources.probe._run import run


def facts_command(out_dir: Path, *, python: str = sys.executable) -> list[str]:
    """The srun line: one task per node, each writing DIR/<node>.json (compat expands %N itself)."""
    return ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", python, "-m", "compat", "facts", "-o", str(out_dir / "%N.json")]


def allocated_nodes(environ: Mapping[str, str], *, timeout: float) -> list[str] | None:
    """The allocation's node names (`scontrol show hostnames`); None when they cannot be listed."""
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        return None
    result = run(["scontrol", "show", "hostnames", nodelist], timeout=timeout)
    if not result.ok:
        return None
    return sorted(line.strip() for line in result.stdout.splitlines() if line.strip())


def slurm_out_dir(out_dir: Path | None, environ: Mapping[str, str] | None = None) -> Path:
    """Where --slurm writes: `out_dir`, else compat-fleet-<job id> in the working directory."""
    environ = os.environ if environ is None else environ
    job = environ.get("SLURM_JOB_ID")
    if not job:
        raise UsageError("--slurm runs inside a Slurm allocation (salloc or sbatch): SLURM_JOB_ID is not set")
    return out_dir or Path(f"compat-fleet-{job}")


def gather_slurm(
    out_dir: Path | None, *, timeout: float, environ: Mapping[str, str] | None = None
) -> tuple[list[Member], int | None]:
    """Every node's facts and the job's task count; a node that wrote nothing in time is a missing member.

    `out_dir` must be shared by the nodes; None: compat-fleet-<job id> in the working directory.
    """
    environ = os.environ if environ is None else environ
    out_dir = slurm_out_dir(out_dir, environ)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out_dir}: {exc.strerror or exc}") from exc
    expected = allocated_nodes(environ, timeout=min(timeout, 10.0))
    result = run(facts_command(out_dir), timeout=timeout)
    found = read_members(out_dir) if any(out_dir.glob("*.json")) else []
    names = {m.node for m in found}
    why = result.problem or "wrote no facts"
    state = MemberState.TIMED_OUT if result.timed_out else MemberState.FAILED
    missing = [Member(node=n, state=state, detail=why) for n in (expected or []) if n not in names]
    if not found and not missing:
        raise UsageError(f"srun gathered no facts: {why}")
    ntasks = environ.get("SLURM_NTASKS", "")
    return found + missing, int(ntasks) if ntasks.isdigit() else None
