"""Fixtures for the Docker build-step tests.

compat is installed the way the top-level Dockerfile installs it (`compat-build-step install`
over a copy of exactly what the Dockerfile copies into its build stage), into one virtual
environment per test session. The venv sees the packages of the interpreter running the tests
(pip, hatchling and compat's dependencies, from the test extra) through a .pth file, and pip
never reaches an index (--no-index), so no network is needed. --system-site-packages would not
do: inside a virtual environment it exposes the base interpreter's packages, not the venv's.
"""

from __future__ import annotations

import shutil
import site
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docker.dockerstep import DOCKERFILE, REPO, StepResult, clean_env, dockerfile_copy_sources, run_step


@dataclass(frozen=True, kw_only=True)
class BuildVenv:
    root: Path
    """The virtual environment compat was installed into."""
    bin: Path
    """Its scripts directory (put first on PATH)."""
    python: Path
    """Its interpreter."""
    dist: Path
    """Where the install step left the compat wheel."""
    install: StepResult
    """What the install step said."""


@pytest.fixture(scope="session")
def build_venv(tmp_path_factory) -> BuildVenv:
    base = tmp_path_factory.mktemp("docker-build")
    context = base / "context"
    for src in dockerfile_copy_sources(DOCKERFILE):
        origin = REPO / src
        target = context / src
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"))
        else:
            shutil.copy2(origin, target)
    root = base / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    # Plain directory lines, so the .pth files in them (the test environment's editable compat)
    # are not run: compat must come from what the install step puts in the venv.
    own = Path(sysconfig.get_path("purelib", vars={"base": str(root), "platbase": str(root)}))
    (own / "_test_environment.pth").write_text("".join(f"{d}\n" for d in site.getsitepackages()), encoding="utf-8")
    bin_dir = root / "bin"
    dist = base / "dist"
    env = clean_env(
        base,
        bin_dir,
        COMPAT_PIP_ARGS="--no-deps --no-build-isolation --no-index",
    )
    result = run_step(["install", str(context), str(dist)], env, cwd=base)
    assert result.rc == 0, f"install step failed:\n{result.output}"
    return BuildVenv(root=root, bin=bin_dir, python=bin_dir / "python", dist=dist, install=result)


@pytest.fixture
def fake_bin(tmp_path) -> Path:
    """A directory for stand-in tools, put first on PATH by the tests that use it."""
    d = tmp_path / "fake-bin"
    d.mkdir()
    return d

