"""Operating system, CPU and build tools: what collect_env reports beside the GPU facts.

Each tool is asked for its version in its own thread with a timeout; a missing tool is None,
a hanging or garbled one Unknown.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from compat.model.facts import System, Tool
from compat.model.unknown import Unknown
from compat.sources.probe._run import Outcome, RunResult, run

TOOLS = {
    "gcc": ["gcc", "--version"],
    "clang": ["clang", "--version"],
    "cmake": ["cmake", "--version"],
    "nvcc": ["nvcc", "--version"],
}
_VERSION = {
    "gcc": re.compile(r"^gcc.*?(\d+\.\d+\.\d+)\s*$", re.M),
    "clang": re.compile(r"clang version (\d+\.\d+\.\d+)"),
    "cmake": re.compile(r"cmake version (\d+\.\d+\.\d+)"),
    "nvcc": re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)"),
}


def probe_system(
    *, timeout: float, platform_text: str | Unknown = Unknown(reason="not probed"), cuda_home: Path | None = None,
) -> System:
    with ThreadPoolExecutor(max_workers=len(TOOLS)) as pool:
        results = {name: pool.submit(run, cmd, timeout=timeout) for name, cmd in TOOLS.items()}
        tools = tuple(parse_tool(name, results[name].result()) for name in TOOLS)
    return System(
        os=parse_os_release(_read("/etc/os-release")),
        platform=platform_text,
        cpu=parse_cpuinfo(_read("/proc/cpuinfo")),
        tools=tools,
        cuda_toolkit=read_cuda_toolkit(cuda_home or Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda")),
    )


def read_cuda_toolkit(root: Path) -> str | None | Unknown:
    """The toolkit at `root`: version.json (CUDA 11.1 and later), else version.txt; None without a toolkit."""
    if not root.is_dir():
        return None
    for name, parse in (("version.json", parse_cuda_version_json), ("version.txt", parse_cuda_version_txt)):
        text = _read(str(root / name))
        if not isinstance(text, Unknown):
            return parse(text)
    return Unknown(reason=f"{root} has neither version.json nor version.txt")


def parse_cuda_version_json(text: str) -> str | Unknown:
    try:
        data = json.loads(text)
        version = data["cuda"]["version"]
    except (ValueError, KeyError, TypeError):
        return Unknown(reason="version.json names no CUDA version")
    return str(version) if re.match(r"^\d+\.\d+", str(version)) else Unknown(reason=f"version.json: {version!r} is not a version")


def parse_cuda_version_txt(text: str) -> str | Unknown:
    m = re.search(r"CUDA Version (\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else Unknown(reason="version.txt names no CUDA version")


def _read(path: str) -> str | Unknown:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return Unknown(reason=f"cannot read {path}: {exc.strerror or exc}")


def parse_tool(name: str, result: RunResult) -> Tool:
    if result.outcome is Outcome.NOT_FOUND:
        return Tool(name=name, version=None)
    if not result.ok:
        return Tool(name=name, version=Unknown(reason=result.problem or f"{name} exited with {result.returncode}"))
    m = _VERSION[name].search(result.stdout)
    if not m:
        return Tool(name=name, version=Unknown(reason=f"{name} printed no version"))
    return Tool(name=name, version=m.group(m.lastindex or 1))


def parse_os_release(text: str | Unknown) -> str | Unknown:
    if isinstance(text, Unknown):
        return text
    fields = dict(
        (k, v.strip().strip('"'))
        for k, _, v in (line.partition("=") for line in text.splitlines())
        if k and v
    )
    return fields.get("PRETTY_NAME") or fields.get("NAME") or Unknown(reason="/etc/os-release names no system")


def parse_cpuinfo(text: str | Unknown) -> str | Unknown:
    if isinstance(text, Unknown):
        return text
    models = re.findall(r"^model name\s*:\s*(.+)$", text, re.M)
    count = len(re.findall(r"^processor\s*:", text, re.M)) or os.cpu_count() or 0
    if not models:
        return Unknown(reason="/proc/cpuinfo names no CPU model")
    return f"{models[0].strip()}, {count} CPUs"
