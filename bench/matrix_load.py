"""How long loading the whole matrix takes: every releases file plus cuda, torch, gpus, signatures.

Each run is a fresh interpreter (`python -c`), so module caches do not flatter the figure; the
time measured is load_matrix() plus loading every releases file (requirements stay lazy, as in
doctor and lock). Goal: median under 100 ms. Usage: python bench/matrix_load.py [RUNS]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

_CHILD = """
import json, time
t0 = time.perf_counter()
from compat.matrix import load_matrix
from compat.sources.settings import read_settings
t1 = time.perf_counter()
m = load_matrix(cache_dir=read_settings().cache_dir)  # as the CLI does
t2 = time.perf_counter()
packages = m.releases.all()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "matrix": t2 - t1, "releases": t3 - t2,
                  "packages": len(packages), "count": sum(len(p.releases) for p in packages)}))
"""


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    samples = []
    for _ in range(runs + 1):  # the first run may fill the parsed-table cache: not counted
        out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
        samples.append(json.loads(out.stdout))
    samples = samples[1:]
    load = [s["matrix"] + s["releases"] for s in samples]
    first = samples[0]
    print(f"{first['packages']} release files, {first['count']} releases; {runs} runs")
    print(f"load (matrix + all releases): median {statistics.median(load) * 1000:.1f} ms, "
          f"min {min(load) * 1000:.1f} ms, max {max(load) * 1000:.1f} ms")
    print(f"  of which releases: median {statistics.median(s['releases'] for s in samples) * 1000:.1f} ms; "
          f"import compat.matrix: median {statistics.median(s['import'] for s in samples) * 1000:.1f} ms")
    return 0 if statistics.median(load) < 0.100 else 1


if __name__ == "__main__":
    sys.exit(main())
