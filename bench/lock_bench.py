"""Speed of `compat lock` against `uv pip compile` of the same pins (uv's cache warm), and on hard targets.

    python bench/lock_bench.py [--runs 7] [--uv PATH]
    python bench/lock_bench.py --suite [--runs 3]

--suite times one whole `compat lock` process per real target in SUITE (pinned and ranged, one to
four targets, separately pinned pairs, sets that do not exist) and prints the median of each with
its outcome; the goal is under 2 s for every one, a lock or a proof that none exists.

compat runs offline from the shipped matrix; uv needs the network (the bench only, never the
tests). The lock is written to a temporary file and its pins (index line included) are what
uv compiles, so both tools answer the same question. Prints one line per tool with the median.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOCK = ["trl[vllm]", "--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.11"]


A100_R550 = ["--gpus", "2xA100", "--driver", "550.54.15", "--python-version", "3.11"]
H100_R580 = ["--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.12"]
H100_R550 = ["--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.11"]
HARD = ["trl[vllm,deepspeed,peft,liger]", "flash-attn", "bitsandbytes", "xformers"]

SUITE: list[list[str]] = [
    ["trl[vllm]", *H100_R580],
    ["trl[vllm]", *H100_R550],
    ["trl[vllm]", "--gpus", "8xA100", "--driver", "535.104.05", "--python-version", "3.10"],
    ["trl[vllm]==0.15.1", *A100_R550],
    ["trl[vllm]==0.17.0", *A100_R550],
    ["trl==0.17.0", "vllm==0.8.5.post1", *A100_R550],
    ["trl==0.15.2", "vllm==0.7.2", *A100_R550],
    ["trl==0.16.0", "vllm==0.8.3", *A100_R550],
    ["trl==0.19.0", "vllm==0.9.2", *H100_R580],
    ["trl==0.21.0", "vllm==0.10.1.1", "transformers==4.55.4", *H100_R580],
    ["trl<0.17", "vllm<0.8", *A100_R550],
    ["trl>=0.18,<0.20", "vllm>=0.8.5", "deepspeed", "peft", *H100_R550],
    ["trl[vllm]>=0.14", "deepspeed", "peft", "liger-kernel", *H100_R580],
    ["vllm==0.8.5.post1", "torch==2.6.0", "transformers==4.51.3", "flash-attn", *H100_R550],
    ["vllm==0.8.5.post1", "deepspeed==0.16.4", "transformers", "flash-attn", *H100_R550],
    ["vllm==0.10.1.1", "flash-attn", *H100_R580],
    ["torch==2.6.0", "transformers==4.51.3", "--gpus", "1xH100", "--driver", "550.54.15", "--python-version", "3.11"],
    ["flash-attn", "torch", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.12"],
    ["torch==2.13.0+cu126", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    ["trl[vllm]", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    ["torch", "transformers", "accelerate", "--gpus", "cpu", "--python-version", "3.11"],
    ["vllm==0.7.2", "--gpus", "1xRTX5090", "--driver", "580.95.05", "--python-version", "3.11"],
    ["trl[vllm]==1.16.0", "vllm==0.9.0", *H100_R580],
    ["trl==0.15.2", "vllm<0.7.1", *A100_R550],
    ["transformers==4.46.0", "trl", "accelerate", "peft", *A100_R550],
    # The gate locks of issue 21: a torch 2.10 cu129 build, and a 2026 vLLM + flash-attn + DeepSpeed stack on R570.
    ["torch==2.10.0+cu129", "vllm", *H100_R580],
    ["vllm", "flash-attn", "deepspeed", "--gpus", "8xH100", "--driver", "570.86.15", "--python-version", "3.12"],
    # The hard unpinned stack of issue 21 on five machines: every package resolved, none pinned by the user.
    *([*HARD, *machine] for machine in (
        ["--gpus", "8xH100", "--driver", "535.183.01", "--python-version", "3.11"],
        H100_R550,
        ["--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.11"],
        ["--gpus", "1xRTX5090", "--driver", "580.95.05", "--python-version", "3.11"],
        ["--gpus", "1xV100", "--driver", "470.256.02", "--python-version", "3.11"],
    )),
]
"""Real targets: the GRPO stacks of the issue, separately pinned pairs, four-target ranges, impossible sets."""


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


def suite(runs: int) -> None:
    # CPU seconds of the child beside wall time: on a shared machine the wall clock also measures the neighbours.
    worst = worst_cpu = 0.0
    print("  wall     cpu  outcome  target")
    for args in SUITE:
        times, cpus = [], []
        proc = None
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "compat", "lock", *args], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        assert proc is not None
        outcome = {0: "locked", 1: "no set"}.get(proc.returncode, f"exit {proc.returncode}")
        if "stopped at its bound" in proc.stderr:  # exit 1 too, but no proof: the wall-clock bound ran out
            outcome = "stopped"
        median, cpu = statistics.median(times), statistics.median(cpus)
        worst, worst_cpu = max(worst, median), max(worst_cpu, cpu)
        print(f"{median:6.2f} s {cpu:5.2f} s  {outcome:7}  {' '.join(args)}")
    print(f"{len(SUITE)} targets, slowest {worst:.2f} s wall, {worst_cpu:.2f} s CPU (median of {runs} runs each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--uv", default=shutil.which("uv"), help="uv executable (default: on PATH)")
    parser.add_argument("--suite", action="store_true", help="time every target of SUITE")
    args = parser.parse_args()
    if args.suite:
        suite(args.runs)
        return
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
