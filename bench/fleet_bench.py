"""`compat fleet DIR` on 256 saved node snapshots: goal under 2 s wall time, as a user runs it.

The snapshots are the recorded 8xH100 box of tests/data/fleet with the perturbations of
tests/fleet/nodes.py (torch, trl, driver, GPU model, NCCL_IB_HCA, /dev/shm) spread over 256 names.
Each run is a fresh `python -m compat fleet DIR --json` process (after one warm-up); the figure is
the median wall time. Nodes cloned from one image write byte-identical snapshots, which compat parses
and judges once; `--distinct` gives every node its own snapshot (a unique OMP_NUM_THREADS, which is
not compared) to measure the case where nothing is shared.

Usage: python bench/fleet_bench.py [RUNS] [NODES] [--distinct]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fleet.nodes import scaled, with_env, write_cluster

GOAL_S = 2.0


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(args[0]) if args else 5
    count = int(args[1]) if len(args) > 1 else 256
    nodes = scaled(count)
    if "--distinct" in sys.argv:
        nodes = {name: with_env(facts, OMP_NUM_THREADS=str(i)) for i, (name, facts) in enumerate(nodes.items())}
    with tempfile.TemporaryDirectory() as tmp:
        directory = write_cluster(Path(tmp) / "nodes", nodes)
        argv = [sys.executable, "-m", "compat", "fleet", str(directory), "--json"]
        subprocess.run(argv, capture_output=True, check=False)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            out = subprocess.run(argv, capture_output=True, text=True, check=False)
            times.append(time.perf_counter() - started)
        doc = json.loads(out.stdout)
    median = statistics.median(times)
    print(f"compat fleet on {doc['nodes']} nodes: median {median:.2f} s over {runs} runs "
          f"(min {min(times):.2f} s), {len(doc['differences'])} differences; goal < {GOAL_S:g} s")
    return 0 if median < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
