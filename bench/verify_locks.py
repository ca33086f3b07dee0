"""Hand each lock to the real resolver and fail if pip disagrees with any pin (needs the network).

    python bench/verify_locks.py [--keep DIR]

For every case below: `compat lock ... > lock.txt`, then
`pip install --dry-run --ignore-installed -r lock.txt --report report.json`; every pinned name
must come back at exactly the pinned version. tests/resolve/test_verify_network.py runs this under
the `network` marker (skipped by default).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

# The python given here must be the one pip runs under (pip resolves markers for itself).
PY = f"{sys.version_info.major}.{sys.version_info.minor}"
CASES = {
    "grpo-vllm-8xh100-r580": ["trl[vllm]", "--gpus", "8xH100", "--driver", "580.95.05"],
    "grpo-vllm-8xh100-r550": ["trl[vllm]", "--gpus", "8xH100", "--driver", "550.54.15"],
    "trl-0152-vllm-2xa100": ["trl[vllm]==0.15.2", "--gpus", "2xA100", "--driver", "550.54.15"],
    "v100-torch-213": ["torch==2.13.0", "--gpus", "1xV100", "--driver", "580.95.05"],
    "rtx5090-vllm-09": ["vllm==0.9.0", "--gpus", "1xRTX5090", "--driver", "580.95.05"],
}


def pins_of(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        req = Requirement(line)
        spec = next(iter(req.specifier), None)
        if spec is not None and spec.operator == "==":
            out[str(canonicalize_name(req.name))] = spec.version
    return out


def verify(name: str, args: list[str], workdir: Path) -> list[str]:
    lock = subprocess.run([sys.executable, "-m", "compat", "lock", *args, "--python-version", PY],
                          capture_output=True, text=True)
    if lock.returncode != 0:
        return [f"{name}: compat lock failed: {lock.stderr.strip()}"]
    path = workdir / f"{name}.txt"
    path.write_text(lock.stdout)
    report = workdir / f"{name}.report.json"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                          "-r", str(path), "--report", str(report)], capture_output=True, text=True)
    if pip.returncode != 0:
        return [f"{name}: pip could not install the lock: {pip.stderr.strip().splitlines()[-1:]}"]
    chosen = {str(canonicalize_name(i["metadata"]["name"])): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    problems = []
    for pkg, version in sorted(pins_of(lock.stdout).items()):
        got = chosen.get(pkg)
        if got is None or Version(got).public != Version(version).public:
            problems.append(f"{name}: pinned {pkg}=={version}, pip chose {got}")
        elif got != version:
            # A local index (a CPU build in a find-links folder) can serve another build of the same release.
            print(f"{name}: note: pinned {pkg}=={version}, pip chose the build {got}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the locks and pip reports here")
    parser.add_argument("cases", nargs="*", help=f"subset of: {', '.join(CASES)}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        problems = []
        for name in args.cases or CASES:
            found = verify(name, CASES[name], workdir)
            print(f"{name}: {'ok' if not found else 'DISAGREES'}")
            problems += found
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
