"""The API index's budgets: its size in the wheel and the time to answer from one package's slice.

Size: every file under matrix/api (what hatch copies into the wheel as compat/_matrix/api). Goal: at
most 10 MB. Load: in a fresh interpreter per package, load_api() and one lookup of each kind (the
first lookup reads the shard that holds the key; explain, doctor and lock ask this way). Goal: each
package under 50 ms (median of RUNS). Usage: python bench/api_index_bench.py [RUNS] [MATRIX_DIR]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from compat.timeline.index import load_api
from compat.timeline.records import ApiKind
t1, c1 = time.perf_counter(), time.process_time()
base = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
api = load_api(sys.argv[1], base)
root = api.top_level[0]
for kind, key in [(ApiKind.NAME, f"{root}:__nothing__"), (ApiKind.PARAM, f"{root}:X(y)"), (ApiKind.MODULE, root),
                  (ApiKind.CLI, root), (ApiKind.MODEL_TYPE, "llama")]:
    api.present(kind, key)
t2, c2 = time.perf_counter(), time.process_time()
edges = api.imports(api.releases[-1], "torch")
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "lookup": t2 - t1, "lookup_cpu": c2 - c1, "imports": t3 - t2}))
"""


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parent.parent / "matrix"
    api = base / "api"
    files = [p for p in api.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    print(f"matrix/api: {len(files)} files, {total / 1e6:.2f} MB (goal <= 10 MB)")
    worst = 0.0
    for package in sorted(p.name for p in api.iterdir() if p.is_dir()):
        meta = json.loads((api / package / "releases.json").read_text())
        size = sum(p.stat().st_size for p in (api / package).iterdir())
        samples = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", _CHILD, package, str(base)], capture_output=True, text=True, check=True)
            samples.append(json.loads(out.stdout))
        lookup = statistics.median(s["lookup"] for s in samples) * 1000
        cpu = statistics.median(s["lookup_cpu"] for s in samples) * 1000
        imports = statistics.median(s["imports"] for s in samples) * 1000
        worst = max(worst, lookup)
        print(f"  {package:16} {len(meta['releases']):4} releases {size / 1e6:6.2f} MB  "
              f"load + 5 lookups {lookup:6.1f} ms (cpu {cpu:5.1f} ms)  imports of the newest {imports:6.1f} ms")
    ok = total <= 10_000_000 and worst < 50
    print(f"worst load {worst:.1f} ms (goal < 50 ms): {'ok' if ok else 'OVER BUDGET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
