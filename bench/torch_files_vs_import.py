"""torch's build read from its files against the same build read by importing torch, on a real install.

The files are what a cold `compat doctor` reads (compat/sources/probe/torch_files.py); the import is what it read
before and still reads where the files leave a question. Every fact the import gives must be the same from the
files, except XNNPACK (the files do not say it). Prints both, the seconds each took, and exits 1 on a difference.

Usage: python bench/torch_files_vs_import.py [--python PATH]
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

from compat.model.facts import TorchBuild
from compat.sources.probe.interpreter import fetch_interpreter
from compat.sources.probe.torch import fetch_torch_import, fetch_torch_load, parse_torch, parse_torch_load
from compat.sources.probe.torch_files import fetch_torch_files, parse_torch_files

COMPARED = ("version", "cuda", "hip", "debug", "cxx11_abi", "arch_list", "cudnn", "nccl")


def main() -> int:
    args = sys.argv[1:]
    python = Path(args[args.index("--python") + 1] if "--python" in args else sys.executable)
    found = fetch_interpreter(python, timeout=60)
    dist = next((d for d in found.distributions if d.name == "torch"), None)
    if found.torch_dir is None or dist is None:
        print(f"no torch in {python}")
        return 1
    start = time.perf_counter()
    files = parse_torch_files(fetch_torch_files(found.torch_dir, os.environ), packages=found.distributions,
                              requires=dist.requires)
    read = time.perf_counter() - start
    start = time.perf_counter()
    loaded = parse_torch_load(fetch_torch_load(python, found.torch_dir, timeout=600))
    load = time.perf_counter() - start
    start = time.perf_counter()
    imported = parse_torch(fetch_torch_import(python, timeout=600), dist, None)  # type: ignore[arg-type]
    import_seconds = time.perf_counter() - start
    print(f"files:  {read:.3f} s  {files}")
    print(f"load:   {load:.3f} s  {'loaded' if loaded is None else loaded}")
    print(f"import: {import_seconds:.3f} s  {imported}")
    if not isinstance(files, TorchBuild) or not isinstance(imported, TorchBuild):
        return 1
    a, b = dataclasses.asdict(files), dataclasses.asdict(imported)
    differ = [f"{name}: files {a[name]!r}, import {b[name]!r}" for name in COMPARED if a[name] != b[name]]
    print("\n".join(differ) if differ else f"the same: {', '.join(COMPARED)}")
    return 1 if differ or loaded is not None else 0


if __name__ == "__main__":
    sys.exit(main())
