"""Helpers for the Docker build-step tests: the script the Dockerfiles run, run here without Docker.

Everything here runs with an environment like a build's: no GPU tools, no package index.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "docker" / "compat-build-step.sh"
DOCKERFILE = REPO / "Dockerfile"

# A guard against a hung step, not a speed goal: declared hardware must never wait on anything.
STEP_TIMEOUT_S = 300


def dockerfile_copy_sources(dockerfile: Path) -> list[str]:
    """Sources of the COPY instructions that read the build context (not another stage)."""
    sources: list[str] = []
    logical = dockerfile.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in logical.splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0].upper() != "COPY":
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if any(w.startswith("--from") for w in words[1:]):
            continue
        sources.extend(args[:-1])
    return sources


def clean_env(tmp: Path, *path_first: Path, **extra: str) -> dict[str, str]:
    """An environment like a build's: no host Python settings, no index, no GPU tools."""
    env = {
        "PATH": os.pathsep.join([*(str(p) for p in path_first), "/usr/bin", "/bin"]),
        "HOME": str(tmp),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_NO_INPUT": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "NO_COLOR": "1",
    }
    env.update(extra)
    return env


@dataclass(frozen=True, kw_only=True)
class StepResult:
    rc: int
    """Exit status of the step."""
    stdout: str
    """What the step wrote to stdout."""
    stderr: str
    """What the step wrote to stderr."""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_step(args: list[str], env: dict[str, str], cwd: Path) -> StepResult:
    proc = subprocess.run(
        ["bash", str(SCRIPT), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    return StepResult(rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)


def write_tool(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path
