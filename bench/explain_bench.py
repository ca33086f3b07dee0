"""`compat explain` against `grep -E -f` with every catalog pattern, on four kinds of large logs.

Goal (issue #11): on each log (>= 500 MB) `compat explain` takes no longer than `grep -E -f` with
all the catalog's patterns, measured in the same run, and its peak memory stays under 200 MB even
on a 5 GB log. The logs are generated under a temporary directory, never in the repository:

- bench: a multi-rank GRPO run (metrics, progress bars, vLLM stats, dynamo warnings, some colour)
  with a few real errors;
- nccl: NCCL_DEBUG=INFO output (channel, ring, P2P and NET lines) between training lines;
- vllm: vLLM INFO lines (engine stats, scheduler, worker start-up) with (EngineCore pid=...) prefixes;
- hf: a Hugging Face Trainer log coloured with ANSI escapes (logger levels, tqdm bars, warnings).

`compat explain` runs as the command a user types (a child process, `--no-env --json`), after
one warm-up run that compiles and caches the automaton; peak RSS is the child's. Start-up is in
every figure: what a user waits for is the whole command.

Each size runs on all CPUs and on one (every command pinned to CPU 0, as `taskset -c 0` does: compat's
second scan thread then shares that core, so the one-core figure is compat without its parallelism;
issue #25 asks for <= 1.0x `grep -E -f` there on the 50 MB and 500 MB logs of each kind). `rg -f` joins
`grep -E -f` when ripgrep is installed; a pattern set it refuses is reported as "-". The commands run in
turn (compat, grep, rg, compat, ...) and each figure is the median of the runs; CPU seconds (user +
system, the child's own) are printed beside wall seconds: on a machine other people share, the wall
clock of a pinned command measures their load as much as the command.

    python bench/explain_bench.py                     # 1, 50 and 500 MB of each kind, on all CPUs and on one
    python bench/explain_bench.py --mb 50 --cores 1   # one size, one core
    python bench/explain_bench.py --gb5               # also the 5 GB memory run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, NamedTuple

from compat.matrix import shipped_matrix_dir
from compat.matrix.signatures import load_signature_dir


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


_BRACKET = re.compile(r"\[(\^?\]?(?:\\.|[^\]\\])*)\]")
_IN_BRACKET = {"w": "[:alnum:]_", "d": "0-9", "s": "[:space:]", "n": ""}


def _bracket(m: re.Match[str]) -> str:
    """A bracket expression in POSIX terms: classes for `\\w`, `\\d`, `\\s`, a literal `-` last (no backslash escapes
    inside POSIX brackets), no newline (grep reads lines)."""
    body, out, dash = m.group(1), [], False
    negated = body.startswith("^")
    i = 1 if negated else 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            c = body[i + 1]
            if c == "-":
                dash = True
            else:
                out.append(_IN_BRACKET.get(c, c))
            i += 2
        else:
            out.append(body[i])
            i += 1
    inner = "".join(out) + ("-" if dash else "")
    if not inner:
        return "." if negated else "[[:space:]]"
    return "[" + ("^" if negated else "") + inner + "]"


def to_ere(pattern: str) -> str:
    """An approximately equivalent POSIX ERE for GNU grep (for the speed comparison only)."""
    p = pattern.replace("(?:", "(")
    p = _BRACKET.sub(_bracket, p)
    p = p.replace(r"\d", "[0-9]")
    p = re.sub(r"\\([^A-Za-z0-9])", lambda m: m.group(1) if m.group(1) in "'`\"-" else "\\" + m.group(1), p)
    return p


def _nccl_lines(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        r = rng.randrange(8)
        c = rng.randrange(32)
        k = rng.random()
        head = f"node-{r // 4}:{1000 + r}:{2000 + r} [{r % 4}] NCCL INFO "
        if k < 0.35:
            out.append(head + f"Channel {c:02d}/32 : {r}[{r % 4}] -> {(r + 1) % 8}[{(r + 1) % 4}] via P2P/IPC")
        elif k < 0.6:
            out.append(head + f"Channel {c:02d}/0 : {r}[{r % 4}] -> {(r + 4) % 8}[{r % 4}] [send] via NET/IB/{r % 4}/GDRDMA")
        elif k < 0.75:
            out.append(head + f"Ring {c:02d} : {r} -> {(r + 1) % 8} -> {(r + 2) % 8}")
        elif k < 0.85:
            out.append(head + f"comm 0x{rng.randrange(1 << 40):x} rank {r} nRanks 8 nNodes 2 localRanks 4 localRank {r % 4} MNNVL 0")
        elif k < 0.9:
            out.append(head + "Connected all rings, use ring PXN 0 GDR 1")
        else:
            out.append(f"[rank{r}]: {{'loss': {rng.random():.4f}, 'grad_norm': {rng.random() * 3:.4f}, 'epoch': {i / n:.2f}}}")
    return out


def _vllm_lines(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        ts = f"{i % 12 + 1:02d}-12 10:{i % 60:02d}:{rng.randrange(60):02d}"
        k = rng.random()
        pre = f"(EngineCore_DP{rng.randrange(4)} pid={4000 + rng.randrange(64)}) " if rng.random() < 0.5 else ""
        if k < 0.5:
            out.append(f"{pre}INFO {ts} [loggers.py:{rng.randrange(100, 200)}] Engine 000: Avg prompt throughput: {rng.random() * 900:.1f} tokens/s, "
                       f"Avg generation throughput: {rng.random() * 3000:.1f} tokens/s, Running: {rng.randrange(64)} reqs, Waiting: {rng.randrange(8)} reqs, "
                       f"GPU KV cache usage: {rng.random() * 100:.1f}%, Prefix cache hit rate: {rng.random() * 100:.1f}%")
        elif k < 0.7:
            out.append(f"{pre}INFO {ts} [async_llm.py:{rng.randrange(200, 400)}] Added request chatcmpl-{rng.randrange(16**12):012x}.")
        elif k < 0.85:
            out.append(f"{pre}INFO:     127.0.0.1:{rng.randrange(30000, 60000)} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK")
        elif k < 0.95:
            out.append(f"{pre}INFO {ts} [gpu_model_runner.py:{rng.randrange(1000, 3000)}] Graph capturing finished in {rng.randrange(5, 40)} secs, took {rng.random():.2f} GiB")
        else:
            out.append(f"{pre}WARNING {ts} [scheduler.py:{rng.randrange(100, 999)}] Sequence group {rng.randrange(10**5)} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.")
    return out


def _hf_lines(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        k = rng.random()
        ts = f"2025-06-12 10:{i % 60:02d}:{rng.randrange(60):02d},{rng.randrange(1000):03d}"
        if k < 0.4:
            step = rng.randrange(1, 1000)
            out.append(f"\x1b[A\x1b[32m{step / 10:.0f}%\x1b[0m|\x1b[32m{'█' * (step // 100)}\x1b[0m{' ' * (10 - step // 100)}| {step}/1000 [{step // 60:02d}:{step % 60:02d}<{(1000 - step) // 60:02d}:00, {rng.random() * 3:.2f}it/s]")
        elif k < 0.7:
            out.append(f"\x1b[1m{ts}\x1b[0m \x1b[34mINFO\x1b[0m \x1b[2mtransformers.trainer\x1b[0m: {{'loss': {rng.random():.4f}, 'grad_norm': {rng.random() * 3:.4f}, "
                       f"'learning_rate': {rng.random() * 1e-5:.3e}, 'epoch': {i / n:.2f}}}")
        elif k < 0.9:
            out.append(f"\x1b[1m{ts}\x1b[0m \x1b[33mWARNING\x1b[0m \x1b[2maccelerate.utils.other\x1b[0m: Detected kernel version 5.4.0, which is below the recommended minimum of 5.5.0")
        else:
            out.append(f"\x1b[1m{ts}\x1b[0m \x1b[34mINFO\x1b[0m \x1b[2mtransformers.trainer\x1b[0m: Saving model checkpoint to /ckpt/checkpoint-{rng.randrange(10000)}")
    return out


# A root error at the end of each log, as a training run prints it.
TAILS = {
    "nccl": "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n",
    "vllm": "(EngineCore_DP0 pid=4242) ERROR 07-12 13:11:56 [core.py:586] ValueError: Free memory on device (3.21/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n",
    "hf": "\x1b[31mRuntimeError: CUDA error: no kernel image is available for execution on the device\x1b[0m\n",
}
KINDS = {"nccl": _nccl_lines, "vllm": _vllm_lines, "hf": _hf_lines}


def make_kind_log(path: Path, kind: str, mb: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    chunk = ("\n".join(KINDS[kind](rng, 40_000)) + "\n").encode()
    target = mb * 1024 * 1024
    written = 0
    with path.open("wb") as fh:
        while written < target:
            fh.write(chunk)
            written += len(chunk)
        tail = TAILS[kind].encode()
        fh.write(tail)
        written += len(tail)
    return written


def _pinned(cores: int | None) -> Callable[[], None] | None:
    """A child's preexec_fn that pins it to the first `cores` CPUs (None: no pinning)."""
    if cores is None:
        return None
    return lambda: os.sched_setaffinity(0, set(range(cores)))


class Timed(NamedTuple):
    """One run of a command: wall seconds, CPU seconds (user + system, the child's own) and peak RSS in KiB."""

    wall: float
    cpu: float
    rss: int


TOOL_SECONDS = 120.0
"""A grep or rg run longer than this is stopped and shown as "-" (rg with the whole catalog on the coloured
log took over 90 s of CPU for 54 MB, where grep took 0.2 s)."""


def _timed(argv: list[str], env: dict[str, str], cores: int | None, out: IO[bytes],
           bound: float | None = None) -> tuple[Timed, int]:
    """Run `argv` with its output in `out`; its figures (os.wait4 before Popen reaps it) and its exit status
    (-9 when it ran past `bound` seconds and was stopped)."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=out, stderr=null, env=env, preexec_fn=_pinned(cores))
        timer = threading.Timer(bound, proc.kill) if bound is not None else None
        if timer is not None:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        if timer is not None:
            timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Timed(time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss), proc.returncode


def run_explain(path: Path, env: dict[str, str], cores: int | None = None) -> tuple[Timed, dict]:
    """The figures and JSON answer of `compat explain` run as a command."""
    with tempfile.TemporaryFile() as out:
        timed, code = _timed([sys.executable, "-m", "compat", "explain", "--no-env", "--json", str(path)], env, cores, out)
        if code not in (0, 1):
            raise SystemExit(f"compat explain failed with exit {code} on {path}")
        out.seek(0)
        return timed, json.loads(out.read())


def run_grep(path: Path, pfile: Path, cores: int | None = None, tool: str = "grep") -> Timed | None:
    """The figures of `grep -E -c -f` (or `rg -c -f`) over the log; None when the tool is missing or refuses."""
    exe = shutil.which(tool)
    if exe is None:
        return None
    argv = [exe, "-E", "-c", "-f", str(pfile), str(path)] if tool == "grep" else [exe, "-c", "-f", str(pfile), str(path)]
    with tempfile.TemporaryFile() as out:
        timed, code = _timed(argv, {**os.environ, "LC_ALL": "C"}, cores, out, TOOL_SECONDS)
    if code not in (0, 1):
        print(f"{tool} on {path.name}: " + (f"stopped after {TOOL_SECONDS:.0f} s" if code == -9 else f"failed with exit {code}"))
        return None
    return timed


def _median(runs: list[Timed | None]) -> Timed | None:
    """The run of median wall time (and, apart, the median CPU): one slow or one lucky run must not move it."""
    done = [r for r in runs if r is not None]
    if not done:
        return None
    wall = sorted(done, key=lambda r: r.wall)[len(done) // 2]
    cpu = sorted(r.cpu for r in done)[len(done) // 2]
    return Timed(wall.wall, cpu, max(r.rss for r in done))


def _ratio(t: float, other: float | None) -> str:
    return f"{t / other:6.2f}" if other else "     -"


def _secs(t: float | None) -> str:
    return f"{t:7.2f}" if t else "      -"


def _row(kind: str, mb: float, cores: int | None, explain: Timed, grep: Timed | None, rg: Timed | None) -> str:
    """One line of the table: each command's wall and CPU seconds, and compat's ratio to each."""
    shown = "all" if cores is None else str(cores)
    g_wall, g_cpu = (grep.wall, grep.cpu) if grep else (None, None)
    r_wall, r_cpu = (rg.wall, rg.cpu) if rg else (None, None)
    return (f"{kind:6} {mb:6.1f} {shown:>4} {explain.wall:8.2f} {explain.cpu:7.2f} {mb / explain.wall:6.0f} "
            f"{_secs(g_wall)} {_secs(g_cpu)} {_ratio(explain.wall, g_wall)} {_ratio(explain.cpu, g_cpu)} "
            f"{_secs(r_wall)} {_secs(r_cpu)} {_ratio(explain.wall, r_wall)} {_ratio(explain.cpu, r_cpu)} "
            f"{explain.rss / 1024:7.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, nargs="+", default=[1, 50, 500], help="sizes of the logs (MiB)")
    ap.add_argument("--cores", choices=["all", "1", "both"], default="both", help="run on all CPUs, on one, or both")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each command, in turn; the median counts")
    ap.add_argument("--gb5", action="store_true", help="also measure time and memory on a 5 GB log")
    ap.add_argument("--only", choices=["bench", *KINDS], action="append", help="only these logs")
    args = ap.parse_args()
    catalog = load_signature_dir(shipped_matrix_dir() / "signatures")
    patterns = [p for s in catalog for p in s.patterns]
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        # As installed: byte code is kept (pip compiles it), the automaton is cached.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(root), COMPAT_CACHE_DIR=str(tmp / "cache"))
        pfile = tmp / "patterns.txt"
        pfile.write_text("\n".join(to_ere(p) for p in patterns) + "\n")
        print(f"catalog: {len(catalog)} signatures / {len(patterns)} patterns; {os.cpu_count()} CPUs; load "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        print("medians of the runs, taken in turn (compat, grep, rg, compat, ...); wall and CPU (user + system) seconds")
        print(f"{'log':6} {'MB':>6} {'CPUs':>4} {'explain':>8} {'cpu':>7} {'MB/s':>6} {'grep':>7} {'cpu':>7} {'wall x':>6} "
              f"{'cpu x':>6} {'rg':>7} {'cpu':>7} {'wall x':>6} {'cpu x':>6} {'peak RSS':>10}  verdict / first match")
        cores_runs = {"all": [None], "1": [1], "both": [None, 1]}[args.cores]
        for mb_asked in args.mb:
            for kind in args.only or ["bench", *KINDS]:
                log = tmp / f"{kind}.log"
                size = make_log(log, mb_asked) if kind == "bench" else make_kind_log(log, kind, mb_asked)
                for cores in cores_runs:
                    run_explain(log, env, cores)  # warm: page cache, compiled automaton
                    explained: list[Timed | None] = []
                    greps: list[Timed | None] = []
                    rgs: list[Timed | None] = []
                    doc: dict = {}
                    for _ in range(args.runs):  # in turn, so a change in the machine's load falls on all three
                        timed, doc = run_explain(log, env, cores)
                        explained.append(timed)
                        # a tool that was stopped or refused once is not run again on this log
                        greps.append(run_grep(log, pfile, cores) if not greps or greps[-1] else None)
                        rgs.append(run_grep(log, pfile, cores, "rg") if not rgs or rgs[-1] else None)
                    first = doc["matches"][0]["id"] if doc["matches"] else "-"
                    t = _median(explained)
                    assert t is not None
                    print(f"{_row(kind, size / 1e6, cores, t, _median(greps), _median(rgs))}  {doc['verdict']} / {first}")
                log.unlink()
        if args.gb5:
            log = tmp / "big.log"
            size = make_kind_log(log, "nccl", 5 * 1024)
            t, doc = run_explain(log, env)
            print(f"{_row('5GB', size / 1e6, None, t, run_grep(log, pfile), None)}  {doc['verdict']}")


if __name__ == "__main__":
    sys.exit(main())
