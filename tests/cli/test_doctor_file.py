"""`doctor -r FILE` judges the file, not the machine compat runs on: the same JSON with and without an nvcc,
a gcc, LD_LIBRARY_PATH or NCCL variables on the host; `--host` reads the machine too."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

NVCC = ("#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
        "echo 'Cuda compilation tools, release 13.0, V13.0.48'\n")  # the banner of a CUDA 13 toolkit
GCC = "#!/bin/sh\necho 'gcc (Debian 14.2.0-19) 14.2.0'\n"

LOCK = "deepspeed==0.16.4\ntorch==2.5.1\ntransformers==4.48.2\ntrl==0.15.2\naccelerate==1.3.0\n"


def _doctor(tmp_path: Path, requirements: Path, *, toolchain: bool, host: bool = False) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / ("with-tools" if toolchain else "without-tools")
    bin_dir.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "NCCL_", "CUDA_"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"
    env["COMPAT_CACHE_DIR"] = os.environ["COMPAT_CACHE_DIR"]  # the run's private cache: a cold child parses the whole matrix
    if toolchain:
        for name, text in (("nvcc", NVCC), ("gcc", GCC)):
            tool = bin_dir / name
            tool.write_text(text)
            tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
        env.update(LD_LIBRARY_PATH="/usr/local/cuda-13.0/lib64", NCCL_P2P_DISABLE="1", CUDA_HOME=str(tmp_path / "no-cuda"))
    args = [sys.executable, "-m", "compat", "doctor", "-r", str(requirements), "--gpus", "8xH100", "--driver", "550.54.15",
            "--python", sys.executable, "--no-config", "--json"] + (["--host"] if host else [])
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path, check=False)


def test_the_verdict_on_a_file_does_not_depend_on_the_host(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(LOCK)
    bare = _doctor(tmp_path, requirements, toolchain=False)
    tooled = _doctor(tmp_path, requirements, toolchain=True)
    assert bare.returncode in (0, 1), bare.stderr
    assert bare.stdout == tooled.stdout
    facts = json.loads(bare.stdout)["facts"]
    assert facts["system"]["unknown"].startswith("not read: a requirements file is judged on its own")
    assert facts["launch"]["env"] == {}


def test_host_reads_the_machine_too(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(LOCK)
    tooled = _doctor(tmp_path, requirements, toolchain=True, host=True)
    assert tooled.returncode in (0, 1), tooled.stderr
    facts = json.loads(tooled.stdout)["facts"]
    tools = {t["name"]: t for t in facts["system"]["tools"]}
    assert "13.0" in json.dumps(tools.get("nvcc"))
    assert facts["launch"]["env"].get("NCCL_P2P_DISABLE") == "1"


def test_host_is_documented_in_help():
    from typer.testing import CliRunner

    from compat.cli import app

    assert "--host" in CliRunner().invoke(app, ["doctor", "--help"], env={"COLUMNS": "200"}).stdout
