"""A plan's commands work as printed: four broken environments, each planned and then repaired by running the
printed pip commands against a package index on 127.0.0.1 that serves the matrix's releases; afterwards
`pip check` accepts the environment and doctor finds no error in it.

Each environment is a real venv (with pip) whose packages were installed by pip from that index, then broken
the way people break them: one package up- or downgraded with --no-deps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from compat.matrix import load_matrix
from tests.resolve.matrix_index import MatrixIndex, serve

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.version_info < (3, 11), reason="trl 1.x, the stack these environments hold, needs Python 3.11"),
]

SERVED = ("trl", "transformers", "peft", "accelerate", "datasets", "huggingface-hub")
TORCH = ("torch", "2.13.0+cpu")  # installed, never moved: a plan that reinstalls torch fails here (the index has no other)

BROKEN = {
    "transformers too old for trl": ({"trl": "1.16.0", "peft": "0.18.0", "accelerate": "1.15.0", "datasets": "5.2.0",
                                      "huggingface-hub": "1.33.0", "transformers": "4.46.0"}, ["trl", "peft"]),
    "transformers too new for trl": ({"trl": "0.15.2", "accelerate": "1.15.0", "datasets": "4.0.0",
                                      "huggingface-hub": "1.33.0", "transformers": "5.23.0"}, ["trl"]),
    "peft too new for transformers": ({"peft": "0.21.2", "accelerate": "1.15.0", "huggingface-hub": "0.36.0",
                                       "transformers": "4.46.0"}, ["peft"]),
    "accelerate too old for trl": ({"trl": "1.16.0", "accelerate": "0.34.0", "datasets": "5.2.0", "huggingface-hub": "1.33.0",
                                    "transformers": "5.23.0"}, ["trl"]),
}


@pytest.fixture(scope="module")
def index():
    with serve(MatrixIndex(load_matrix(), SERVED, extra=[TORCH])) as url:
        yield url


def _pip_env(index: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "COMPAT_", "VIRTUAL_ENV"))}
    # Only this index: no pip.conf (its find-links or constraints), no cache, no network.
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=index, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1", PIP_RETRIES="0", PIP_TIMEOUT="10", COMPAT_NO_CACHE="1")
    return env


def _venv_with_pip(root: Path, shelf: Path) -> str:
    """A venv whose `python -m pip` is this interpreter's pip, seen through a .pth file (ensurepip costs seconds a
    venv); pip installs into the venv it runs in, and is no distribution of it (`pip check` does not see it)."""
    import pip

    venv.create(root, with_pip=False, symlinks=True)
    shelf.mkdir(exist_ok=True)
    (shelf / "pip").symlink_to(Path(pip.__file__).parent, target_is_directory=True)
    site = next(root.glob("lib/python*/site-packages"))
    (site / "_shared_pip.pth").write_text(f"{shelf}\n")
    return str(root / "bin" / "python")


def _run(args: list[str], env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _compat(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "compat", *args], env)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_printed_plan_repairs_the_environment(case, index, tmp_path):
    installed, _ = BROKEN[case]
    env = _pip_env(index)
    root = tmp_path / "venv"
    python = _venv_with_pip(root, tmp_path / "pip-only")
    pins = [f"{n}=={v}" for n, v in sorted(installed.items())] + ["torch==2.13.0+cpu"]
    made = _run([python, "-m", "pip", "install", "--no-deps", "-q", *pins], env)
    assert made.returncode == 0, made.stderr

    planned = _compat("plan", "--python", str(root), "--gpus", "cpu", "--json", env=env)
    assert planned.returncode in (0, 1), planned.stderr
    plan = json.loads(planned.stdout)
    for step in plan["steps"]:
        command = step["command"]
        assert command[:3] == [python, "-m", "pip"], command  # the judged interpreter, not a bare pip
        ran = _run(command, env)
        assert ran.returncode == 0, f"{' '.join(command)}\n{ran.stdout}\n{ran.stderr}"

    checked = _run([python, "-m", "pip", "check"], env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    doctor = _compat("doctor", "--python", str(root), "--gpus", "cpu", "--fail-on", "error", env=env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
