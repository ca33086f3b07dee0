"""Real launchers on loopback for the fleet tests: two torchrun "nodes", a second virtual environment."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def other_venv(path: Path, *, package: str = "peft", version: str = "0.99.0") -> Path:
    """A venv that sees this interpreter's packages plus one fake distribution: a node with one package drifted."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(path)
    site = next(path.glob("lib/python*/site-packages"))
    # This interpreter's site directories (with their own .pth files: an editable install), after the new
    # venv's own: system_site_packages would reach the base interpreter's, not those of a venv running the tests.
    parents = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
    (site / "zz_parent_env.pth").write_text(f"import site; list(map(site.addsitedir, {parents!r}))\n", encoding="utf-8")
    dist = site / f"{package}-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n", encoding="utf-8")
    return path / "bin" / "python"


def env(**extra: str) -> dict[str, str]:
    """This environment for a launcher's children, with this checkout first. The children keep the run's private cache
    (COMPAT_CACHE_DIR, tests/conftest.py): ranks that start together each write an entry atomically, and a later
    test's ranks read the parsed matrix and the torch report from it instead of importing torch again."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "HF_"))}
    out.update({"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra})
    return out


def torchrun(python: Path | str, node_rank: int, port: int, args: list[str], environ: dict[str, str],
             *, nproc: int = 2) -> subprocess.Popen[bytes]:
    """One torchrun "node" of a 2-node job on 127.0.0.1, in its own process group (killed as one)."""
    argv = [str(python), "-m", "torch.distributed.run", "--nnodes", "2", "--node_rank", str(node_rank),
            "--nproc_per_node", str(nproc), "--master_addr", "127.0.0.1", "--master_port", str(port), *args]
    return subprocess.Popen(argv, env=environ, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


PYTHON = Path(sys.executable)
