"""`compat fleet --smoke`: every node's `compat smoke --json` report, saved as `DIR/smoke/NODE.json` (by srun, a
pod, an earlier run) or run now by `--slurm` with one srun step."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compat.errors import CompatError
from compat.model import codec
from compat.model.smoke import SmokeReport
from compat.sources.facts_file import read_text
from compat.sources.probe._run import run

SUBDIR = "smoke"
"""Where the nodes' smoke reports lie beside their facts files (`DIR/smoke/NODE.json`)."""


def smoke_command(out_dir: Path, *, budget: float, python: str = sys.executable) -> list[str]:
    """The srun line: `compat smoke` once per node, each writing DIR/smoke/<node>.json (compat expands %N itself).
    A node whose smoke fails exits 1; --kill-on-bad-exit=0 lets the others finish."""
    return ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0", python, "-m", "compat", "smoke", "--json",
            "--budget", f"{budget:g}", "-o", str(out_dir / SUBDIR / "%N.json")]


def read_smoke_report(text: str) -> SmokeReport | str:
    """A node's report from `compat smoke --json`, or the one-line reason it cannot be read."""
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            return "not a compat smoke report (not a JSON object)"
        fields = {k: v for k, v in doc.items() if k not in ("schema_version", "compat_version", "failed")}
        return codec.decode(SmokeReport, fields)
    except (ValueError, TypeError, RecursionError) as exc:  # codec.DecodeError is a ValueError
        return f"not a compat smoke report: {' '.join(str(exc).split())[:200]}"


def read_node_smoke(directory: Path) -> list[tuple[str, SmokeReport | str]]:
    """(node, its report or why none can be read) for each `DIR/smoke/*.json`; none when the folder is absent."""
    folder = directory / SUBDIR
    found: list[tuple[str, SmokeReport | str]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            found.append((path.stem, read_smoke_report(read_text(path))))
        except CompatError as exc:  # unreadable: a FIFO, too large, not UTF-8
            found.append((path.stem, " ".join(str(exc).split())))
    return found


def run_slurm_smoke(out_dir: Path, *, timeout: float, budget: float) -> tuple[list[tuple[str, SmokeReport | str]], str | None]:
    """srun `compat smoke` on every node of the allocation; the reports, and what srun said when it failed or timed
    out (a node without a report is named by the caller)."""
    (out_dir / SUBDIR).mkdir(parents=True, exist_ok=True)
    result = run(smoke_command(out_dir, budget=budget), timeout=timeout)
    problem = None if result.ok else (result.problem or "srun failed")
    if result.timed_out:
        problem = f"the srun step ran past {timeout:g} s"
    return read_node_smoke(out_dir), problem
