"""Speed of `compat lock` against `uv pip compile` of the same pins (uv's cache warm).

    python bench/lock_bench.py [--runs 7] [--uv PATH]

compat runs offline from the shipped matrix; uv needs the network (the bench only, never the
tests). The lock is written to a temporary file and its pins (index line included) are what
uv compiles, so both tools answer the same question. Prints one line per tool with the median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOCK = ["trl[vllm]", "--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.11"]


def timed(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    times = []
    proc = None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return statistics.median(times), proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--uv", default=shutil.which("uv"), help="uv executable (default: on PATH)")
    args = parser.parse_args()
    median, proc = timed([sys.executable, "-m", "compat", "lock", *LOCK], args.runs)
    print(f"compat lock {' '.join(LOCK)}: median {median:.3f} s over {args.runs} runs")
    if not args.uv:
        print("uv not found: pip install uv (into a temporary venv) to compare")
        return
    with tempfile.TemporaryDirectory() as tmp:
        pins = Path(tmp) / "pins.in"
        # uv reads the same requirements file; flash-attn-style commented pins stay comments.
        pins.write_text(proc.stdout)
        # uv does not read pip's configuration: hand it the same index and CA bundle pip uses.
        index = os.environ.get("PIP_INDEX_URL")
        cmd = [args.uv, "pip", "compile", str(pins), "--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28",
               "--index-strategy", "unsafe-best-match", *(["--index-url", index] if index else []), "-q"]
        env = dict(os.environ)
        if os.environ.get("PIP_CERT"):
            env.setdefault("SSL_CERT_FILE", os.environ["PIP_CERT"])
        warm = subprocess.run(cmd, capture_output=True, text=True, env=env)  # warm uv's cache
        if warm.returncode != 0:
            print(f"uv pip compile failed: {warm.stderr.strip().splitlines()[-1:]}")
            return
        uv_median, _ = timed(cmd, args.runs, env=env)
    print(f"uv pip compile (same pins, warm cache): median {uv_median:.3f} s over {args.runs} runs")


if __name__ == "__main__":
    main()
