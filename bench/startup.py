"""Start-up of the commands a user runs first, against `pip --version` on the same machine (issue 25).

Goals: `compat --version` <= 1.0x `pip --version`; `compat explain` on a 20-line log and `compat doctor -r` on a
100-line requirements file <= 1.5x, cold start, caches warm. Each run is a fresh process; compat and pip run in
turn (A B A B ...) and the ratio is taken pair by pair from the CPU time of the process and its children (the
probe's children count), so a machine whose load drifts still gives a fair ratio. Then `python -X importtime`
lists what `compat explain` imports, biggest first, and checks it against IMPORT_BUDGET and FORBIDDEN (the test
tests/cli/test_startup.py holds FORBIDDEN too, without timing anything).

Usage: python bench/startup.py [RUNS]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORBIDDEN = (
    "pydantic", "pydantic_core", "rich", "resolvelib", "pip_api", "pip", "uv", "tomllib", "requests", "urllib3",
    "jsonschema", "markdown_it", "yaml",
    "compat.resolve", "compat.fleet", "compat.smoke", "compat.maintain", "compat.api.curation",
    "compat.api.locking", "compat.api.nodes", "compat.api.stack",
)
"""Top-level packages and compat modules `compat explain` on a pasted log must not import (nor anything under
them): the resolver, the fleet, smoke and curation code, pydantic (typer's coercion of other types), rich
(progress bars of big logs), the TOML parser (a compiled matrix is read back without it) and the network."""

IMPORT_BUDGET = 233
"""Modules (standard library included) `compat explain --no-env` imports; 298 when a budget of 320 was set, 268
when it was lowered to 290 (2026-11-27: the lock, conflict and pattern-parser modules and tempfile left the path);
264 once a process registered only the command it runs; 266 when it was lowered to 270 (2026-11-28); 265 when it
was lowered to 265 (2026-11-28 06:00 UTC: the facts and config models left the path); 229 when it was lowered to
235 (2026-11-28 12:40 UTC: plain `compat explain` arguments are read without typer); 231 when it was lowered to
232 (2026-11-28 15:10 UTC: difflib is imported only to suggest a near name); 233 when it was raised to this
(2026-11-28 20:05 UTC: the API timeline's drift module, past 600 lines, split in two: compat.timeline.homes, no other import). What costs now is less
the number of modules than what they do at import: frozen dataclasses (about 1 ms each) and regexes."""

LOG = """\
[rank0]: Loading checkpoint shards: 100%|##########| 2/2
[rank0]: Starting training
Traceback (most recent call last):
  File "/home/user/train.py", line 12, in <module>
    from trl import SFTTrainer
  File "/usr/lib/python3.11/site-packages/trl/__init__.py", line 5, in <module>
    from .trainer import SFTTrainer
  File "/usr/lib/python3.11/site-packages/trl/trainer/__init__.py", line 3, in <module>
    from .sft_trainer import SFTTrainer
  File "/usr/lib/python3.11/site-packages/trl/trainer/sft_trainer.py", line 20, in <module>
    import torch
  File "/usr/lib/python3.11/site-packages/torch/__init__.py", line 290, in <module>
    from torch._C import *
ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory
step 1 loss 2.3
step 2 loss 2.1
step 3 loss 2.0
step 4 loss 1.9
done
exiting
"""
"""A 20-line log with a Python traceback: what a user pastes."""


def requirements(lines: int = 100) -> str:
    """A pinned requirements file of `lines` lines (comments and blank lines included, as real ones have)."""
    pins = ["torch==2.13.0", "transformers==5.23.0", "trl==1.16.0", "peft==0.21.2", "accelerate==1.15.0",
            "datasets==5.2.0", "numpy==2.2.6", "safetensors==0.6.2", "tokenizers==0.22.1", "huggingface-hub==1.3.0"]
    out = []
    for i in range(lines):
        out.append(f"# group {i // 10}" if i % 10 == 0 else pins[i % len(pins)] if i % 10 == 1 else f"pkg{i}==1.0.{i}")
    return "\n".join(out) + "\n"


AS_INSTALLED = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The environment of every timed run: byte code kept, as pip compiles it when it installs a wheel. Under
PYTHONDONTWRITEBYTECODE an editable checkout compiles each of its modules from source on every start (pip's own
modules were compiled when pip was installed): 1.55x pip's CPU against 1.22x, the same hour."""


def _cpu(command: list[str]) -> tuple[float, float]:
    """(cpu seconds of the process and its children, wall seconds) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=AS_INSTALLED, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def compare(name: str, command: list[str], runs: int) -> None:
    baseline = [sys.executable, "-m", "pip", "--version"]
    _cpu(command), _cpu(baseline)  # warm-up: caches filled (byte code, the compiled matrix), files in the page cache
    cpu, wall = [], []
    for _ in range(runs):
        a, b = _cpu(command), _cpu(baseline)
        cpu.append(a[0] / b[0])
        wall.append(a[1] / b[1])
    print(f"{name:<28} cpu {statistics.median(cpu):.2f}x  wall {statistics.median(wall):.2f}x  pip --version "
          f"(median of {runs} interleaved pairs)")


def imports(log: Path) -> int:
    """Print what `compat explain --no-env` imports, biggest first; the number of modules over the budget
    plus the forbidden ones found."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "compat", "explain", "--no-env", str(log)],
                          capture_output=True, text=True, check=False)
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, module = line.split("|")
            if not module.startswith("  "):  # top level: its cumulative time holds its children's
                rows.append((int(cumulative), module.strip()))
    names = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")][1:]
    print(f"{len(names)} modules imported (budget {IMPORT_BUDGET}); biggest top-level imports:")
    for micros, module in sorted(rows, reverse=True)[:12]:
        print(f"  {micros / 1000:7.1f} ms  {module}")
    bad = sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))
    if bad:
        print(f"forbidden imports: {', '.join(bad)}")
    return len(bad) + (len(names) > IMPORT_BUDGET)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp, "small.log")
        log.write_text(LOG)
        reqs = Path(tmp, "requirements.txt")
        reqs.write_text(requirements())
        os.chdir(tmp)  # no config file on the way up from here, as on most machines
        compat = [sys.executable, "-m", "compat"]
        compare("compat --version", [*compat, "--version"], runs)
        compare("compat explain (20 lines)", [*compat, "explain", str(log)], runs)
        compare("compat doctor -r (100 lines)", [*compat, "doctor", "-r", str(reqs)], runs)
        return 1 if imports(log) else 0


if __name__ == "__main__":
    sys.exit(main())
