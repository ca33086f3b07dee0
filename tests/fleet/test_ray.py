"""`compat fleet --ray`: a real local Ray cluster, a head and one worker node with its own environment."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fleet.launch import ROOT, env, free_port, other_venv

# Looked up, not imported: importing ray costs a collecting process 0.4 s of CPU, and only the test that runs
# gather_ray in process needs it imported.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")

START = "from ray.scripts.scripts import main; main()"


def _ray(python: Path | str, args: list[str], environ: dict[str, str]) -> None:
    subprocess.run([str(python), "-c", START, *args], env=environ, check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.slow  # starts a two-node Ray cluster, one node in a second venv
def test_drift_found_through_ray(tmp_path: Path) -> None:
    other = other_venv(tmp_path / "venv")
    port = free_port()
    environ = env(RAY_USAGE_STATS_ENABLED="0")
    small = ["--num-cpus", "1", "--object-store-memory", "80000000", "--node-ip-address", "127.0.0.1"]
    try:
        _ray(sys.executable, ["start", "--head", "--port", str(port), "--include-dashboard", "false", *small], environ)
        # The worker node runs the other venv's python with NCCL_DEBUG set: its facts tasks see both.
        _ray(other, ["start", "--address", f"127.0.0.1:{port}", *small], env(RAY_USAGE_STATS_ENABLED="0", NCCL_DEBUG="WARN"))
        out = subprocess.run([sys.executable, "-m", "compat", "fleet", "--ray", f"127.0.0.1:{port}", "--json", "--timeout", "90",
                              "--out", str(tmp_path / "saved")],
                             env=environ, cwd=ROOT, capture_output=True, text=True, timeout=180)
    finally:
        subprocess.run([sys.executable, "-c", START, "stop", "--force"], env=environ, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert doc["nodes"] == 2 and doc["missing"] == []
    diffs = {(d["aspect"], d["subject"]): d for d in doc["differences"]}
    assert "0.99.0" in {v["value"] for v in diffs[("package", "peft")]["variants"]}
    assert {v["value"] for v in diffs[("env", "NCCL_DEBUG")]["variants"]} == {"WARN", None}
    assert len(list((tmp_path / "saved").glob("*.json"))) == 2


def test_no_cluster_is_a_usage_error() -> None:
    from compat.errors import UsageError
    from compat.sources.fleet.ray_nodes import gather_ray

    with pytest.raises(UsageError, match="cannot connect to the Ray cluster"):
        gather_ray(f"127.0.0.1:{free_port()}", timeout=5)  # nothing listens: refused at once, not after minutes
