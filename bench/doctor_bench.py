"""`compat doctor` against `python -m torch.utils.collect_env` on the same environment.

Both run as fresh processes, N times each, interleaved (after one warm-up each, so the OS page cache is
equally warm); the figures are the median wall time and the median CPU time of the process and its children
(on a loaded machine CPU is the steadier of the two; wall shows what overlapping the children gains). doctor runs twice over: warm (its cache of the
torch report and the installed packages' API kept between runs) and cold (each run with a new,
empty COMPAT_CACHE_DIR, as on a fresh machine or a new image). Goals: warm at least 3x faster than
collect_env, cold at least 5x (issue 25); the exit status holds both and the JSON carrying every field
collect_env prints (checked below, field by field).

Usage: python bench/doctor_bench.py [RUNS] [--python PATH]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# collect_env's fields and where the same fact sits in `compat doctor --json`.
FIELDS = {
    "PyTorch version": ("torch", "version"),
    "Is debug build": ("torch", "debug"),
    "CUDA used to build PyTorch": ("torch", "cuda"),
    "ROCM used to build PyTorch": ("torch", "hip"),
    "OS": ("system", "os"),
    "GCC version": ("system", "tools", "gcc"),
    "Clang version": ("system", "tools", "clang"),
    "CMake version": ("system", "tools", "cmake"),
    "Libc version": ("python", "glibc"),
    "Python version": ("python", "version"),
    "Python platform": ("system", "platform"),
    "Is CUDA available": ("hardware", "gpus"),
    "CUDA runtime version": ("system", "tools", "nvcc"),
    "CUDA_MODULE_LOADING set to": ("launch", "env"),
    "GPU models and configuration": ("hardware", "gpus"),
    "Nvidia driver version": ("hardware", "driver"),
    "cuDNN version": ("torch", "cudnn"),
    "Is XNNPACK available": ("torch", "xnnpack"),
    "Caching allocator config": ("launch", "env"),
    "CPU": ("system", "cpu"),
    "Versions of relevant libraries": ("packages",),
}


def _time(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds of the command and every child it waited for, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def _has(doc: dict, path: tuple[str, ...]) -> bool:
    node = doc
    for key in path:
        if isinstance(node, list):
            node = {item.get("name"): item for item in node if isinstance(item, dict)} if key != "name" else node
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def main() -> int:
    args = sys.argv[1:]
    runs = int(args[0]) if args and args[0].isdigit() else 5
    python = args[args.index("--python") + 1] if "--python" in args else sys.executable
    doctor = [sys.executable, "-m", "compat", "doctor", "--json", "--python", python]
    collect = [python, "-m", "torch.utils.collect_env"]
    _time(doctor), _time(collect)  # warm-up
    d_times: list[tuple[float, float]] = []
    cold_times: list[tuple[float, float]] = []
    c_times: list[tuple[float, float]] = []
    doc_text = ""
    for _ in range(runs):
        wall, cpu, doc_text = _time(doctor)
        d_times.append((wall, cpu))
        with tempfile.TemporaryDirectory() as cache:
            wall, cpu, _ = _time(doctor, {**os.environ, "COMPAT_CACHE_DIR": cache})
        cold_times.append((wall, cpu))
        wall, cpu, _ = _time(collect)
        c_times.append((wall, cpu))
    facts = json.loads(doc_text)["facts"]
    missing = [name for name, path in FIELDS.items() if not _has(facts, path)]
    d, cold, c = (statistics.median(w for w, _ in t) for t in (d_times, cold_times, c_times))
    d_cpu, cold_cpu, c_cpu = (statistics.median(u for _, u in t) for t in (d_times, cold_times, c_times))
    print(f"compat doctor warm: median {d * 1000:.0f} ms wall, {d_cpu * 1000:.0f} ms CPU over {runs} runs")
    print(f"compat doctor cold: median {cold * 1000:.0f} ms wall, {cold_cpu * 1000:.0f} ms CPU over {runs} runs"
          " (an empty cache each run)")
    print(f"collect_env:        median {c * 1000:.0f} ms wall, {c_cpu * 1000:.0f} ms CPU over {runs} runs")
    print(f"speed-up:           warm {c / d:.1f}x, cold {c / cold:.1f}x wall; warm {c_cpu / d_cpu:.1f}x, cold {c_cpu / cold_cpu:.1f}x CPU")
    print("collect_env fields covered: " + ("all" if not missing else f"missing {', '.join(missing)}"))
    return 0 if c / d >= 3 and c / cold >= 5 and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
