"""Measure griffe against compat's ast extractor on unpacked wheels (docs/api-index.md has the numbers).

Usage: python bench/api_griffe_compare.py ast|griffe DIR PACKAGE PROBE...
DIR holds the unpacked wheel (its top-level package folder); griffe runs in its own environment
(it is not a dependency of compat). Prints one JSON line: seconds, top-level names, and which
probes ("Trainer", "Trainer.__init__(args)") each tool finds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def with_ast(root: Path, package: str, probes: list[str]) -> dict:
    from compat.timeline.combine import combine
    from compat.timeline.extract import extract_module, module_name
    from compat.timeline.records import ApiKind

    started, cpu = time.perf_counter(), time.process_time()
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        named = module_name(path.relative_to(root).as_posix())
        if named:
            modules[named[0]] = extract_module(path.read_bytes(), *named)
    api = combine(package, modules, own=(package,))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    top = {k.split(":", 1)[1] for k in api.keys[ApiKind.NAME] if k.split(":", 1)[0] == package}
    found = {}
    for probe in probes:
        if "(" in probe:
            qual, _, param = probe.partition("(")
            qual = qual.removesuffix(".__init__")
            found[probe] = f"{package}:{qual}({param}" in api.keys[ApiKind.PARAM]
        else:
            found[probe] = probe in top
    return {"tool": "ast", "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "top_level_names": len(top), "modules": len(modules), "found": found}


def with_griffe(root: Path, package: str, probes: list[str]) -> dict:
    import griffe

    started, cpu = time.perf_counter(), time.process_time()
    loaded = griffe.load(package, search_paths=[str(root)], allow_inspection=False, resolve_aliases=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    top = {n for n in loaded.members if not n.startswith("_")}
    found = {}
    for probe in probes:
        qual, _, param = probe.partition("(")
        try:
            obj = loaded[qual]
            if param:
                if getattr(obj, "is_alias", False):
                    obj = obj.final_target
                found[probe] = param.rstrip(")") in [p.name for p in obj.parameters]
            else:
                found[probe] = True
        except Exception:
            found[probe] = False
    return {"tool": "griffe", "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "top_level_names": len(top), "modules": len(list(loaded.modules)), "found": found}


if __name__ == "__main__":
    tool, directory, package, *probes = sys.argv[1:]
    run = with_ast if tool == "ast" else with_griffe
    print(json.dumps(run(Path(directory), package, probes)))
