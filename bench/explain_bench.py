"""Throughput of `compat explain` on a large synthetic multi-rank training log.

Goals (issue #3): >= 150 MB/s with the full catalog on a 1 GB log, within 3x of `grep -E`
run with all the catalog's patterns on the same file, and a cost that does not grow with the
number of signatures. The log is generated under a temporary directory, never in the repo.

    python bench/explain_bench.py            # 1 GB
    python bench/explain_bench.py --mb 200   # quicker
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from compat.explain.match import explain
from compat.explain.scan import read_blocks
from compat.matrix import shipped_matrix_dir
from compat.matrix.signatures import Signature, load_signature_dir
from compat.matrix.when import When
from compat.model.findings import Fix, Severity


def _normal_lines(rng: random.Random, n: int) -> list[str]:
    """What a GRPO/SFT run prints between errors: metrics, progress bars, logger lines, warnings."""
    out = []
    for i in range(n):
        rank = rng.randrange(8)
        kind = rng.random()
        ts = f"2025-06-12 10:{i % 60:02d}:{rng.randrange(60):02d},{rng.randrange(1000):03d}"
        if kind < 0.35:
            out.append(f"[rank{rank}]: {{'loss': {rng.random():.4f}, 'grad_norm': {rng.random() * 3:.4f}, 'learning_rate': {rng.random() * 1e-5:.3e}, "
                       f"'rewards/reward_len/mean': {-rng.random() * 20:.3f}, 'completion_length': {rng.randrange(20, 512)}.0, 'kl': {rng.random() / 100:.5f}, 'epoch': {i / n:.2f}}}")
        elif kind < 0.6:
            step = rng.randrange(1, 1000)
            out.append(f" {step / 10:.0f}%|{'#' * (step // 100)}{' ' * (10 - step // 100)}| {step}/1000 [{step // 60:02d}:{step % 60:02d}<{(1000 - step) // 60:02d}:00,  {rng.random() * 3:.2f}s/it]")
        elif kind < 0.8:
            out.append(f"{ts} - INFO - trl.trainer.grpo_trainer - [rank{rank}] generated {rng.randrange(64, 1024)} completions in {rng.random() * 9:.2f} s")
        elif kind < 0.9:
            out.append(f"INFO {i % 12 + 1:02d}-12 10:{i % 60:02d}:01 [llm_engine.py:{rng.randrange(100, 999)}] Avg prompt throughput: {rng.random() * 900:.1f} tokens/s, Avg generation throughput: {rng.random() * 3000:.1f} tokens/s, Running: {rng.randrange(64)} reqs, GPU KV cache usage: {rng.random() * 100:.1f}%.")
        elif kind < 0.97:
            out.append(f"[rank{rank}]:W0612 10:{i % 60:02d}:03.{rng.randrange(10**6):06d} {rng.randrange(1000, 9999)} torch/_dynamo/convert_frame.py:{rng.randrange(900)}] torch._dynamo hit config.cache_size_limit (8)")
        else:
            out.append(f"\x1b[33m{ts}\x1b[0m WARNING: `use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.")
    return out


ERRORS = [
    "[rank3]: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!",
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
    "(EngineCore_DP0 pid=123) ERROR 07-12 13:11:56 [core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
]


def make_log(path: Path, mb: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    chunk = ("\n".join(_normal_lines(rng, 40_000)) + "\n").encode()
    target = mb * 1024 * 1024
    written = 0
    with path.open("wb") as fh:
        while written < target:
            fh.write(chunk)
            written += len(chunk)
            if rng.random() < 0.1:
                line = (rng.choice(ERRORS) + "\n").encode()
                fh.write(line)
                written += len(line)
    return written


def to_ere(pattern: str) -> str:
    """An approximately equivalent POSIX ERE for GNU grep (for the speed comparison only)."""
    p = pattern.replace("(?:", "(")
    p = p.replace(r"[\w.\-]", "[[:alnum:]_.-]").replace(r"[\d.]", "[0-9.]").replace(r"[\w.]", "[[:alnum:]_.]")
    p = p.replace(r"\d", "[0-9]")
    p = re.sub(r"\\([^A-Za-z0-9])", lambda m: m.group(1) if m.group(1) in "'`\"-" else "\\" + m.group(1), p)
    return p


def run_explain(path: Path, signatures) -> float:
    start = time.perf_counter()
    with path.open("rb") as fh:
        result = explain(read_blocks(fh), SimpleNamespace(signatures=signatures))
    elapsed = time.perf_counter() - start
    assert result.known, "the synthetic log holds known failures"
    return elapsed


def run_grep(path: Path, patterns: list[str], tmp: Path) -> float | None:
    grep = shutil.which("grep")
    if grep is None:
        return None
    pfile = tmp / "patterns.txt"
    pfile.write_text("\n".join(to_ere(p) for p in patterns) + "\n")
    start = time.perf_counter()
    proc = subprocess.run([grep, "-E", "-c", "-f", str(pfile), str(path)], capture_output=True, text=True,
                          env={**os.environ, "LC_ALL": "C"}, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        print(f"grep failed: {proc.stderr.strip()}")
        return None
    return elapsed


def synthetic_signatures(n: int, rng: random.Random) -> list[Signature]:
    words = ["kernel", "launch", "segment", "fabric", "shard", "bucket", "replica", "optimizer", "adapter", "pool"]
    out = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(3)) + f" failure {i} in module_{rng.randrange(10**6)}"
        out.append(Signature(id=f"synthetic-{i}", area="bench", title=text, severity=Severity.ERROR,
                             patterns=(re.escape(text) + r" at step \d+",), when=When(), cause="bench",
                             fix=Fix(advice="bench"), refs=("bench/none#1",), doctor=False))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1024)
    args = ap.parse_args()
    catalog = load_signature_dir(shipped_matrix_dir() / "signatures")
    patterns = [p for s in catalog for p in s.patterns]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        log = tmp / "train.log"
        size = make_log(log, args.mb)
        mb = size / 1e6
        print(f"log: {mb:.0f} MB, catalog: {len(catalog)} signatures / {len(patterns)} patterns")
        run_explain(log, catalog)  # warm the page cache
        t = min(run_explain(log, catalog) for _ in range(2))
        print(f"compat explain: {t:.2f} s = {mb / t:.0f} MB/s")
        g = run_grep(log, patterns, tmp)
        if g is not None:
            print(f"grep -E -f (all catalog patterns): {g:.2f} s = {mb / g:.0f} MB/s; explain/grep time ratio {t / g:.2f}")
        bigger = list(catalog) + synthetic_signatures(4 * len(catalog), random.Random(1))
        t5 = run_explain(log, bigger)
        print(f"compat explain with 5x the signatures ({len(bigger)}): {t5:.2f} s = {mb / t5:.0f} MB/s; time ratio {t5 / t:.2f}")


if __name__ == "__main__":
    sys.exit(main())
