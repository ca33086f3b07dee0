"""The Kubernetes recipe: the manifest's container command, run as the kubelet would run it on two nodes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fleet.launch import ROOT, env

MANIFEST = ROOT / "examples" / "kubernetes" / "compat-facts-job.yaml"


@pytest.mark.slow  # three compat processes, one per node and the fleet report
def test_manifest_writes_one_file_per_node_for_compat_fleet(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all(MANIFEST.read_text(encoding="utf-8")))
    job = next(d for d in docs if d["kind"] == "Job")
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert job["spec"]["activeDeadlineSeconds"] > 0 and pod["restartPolicy"] == "Never"
    mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "facts")
    assert {v["name"]: v["valueFrom"]["fieldRef"]["fieldPath"] for v in container["env"]} == {"NODE_NAME": "spec.nodeName"}
    exe = shutil.which("compat")
    for node in ("gpu-node-a", "gpu-node-b"):
        # The kubelet expands $(NODE_NAME) from the downward API; the shared volume is a directory here.
        argv = [a.replace("$(NODE_NAME)", node).replace(mount, str(tmp_path)) for a in container["command"]]
        assert argv[0] == "compat"
        argv[:1] = [exe] if exe else [sys.executable, "-m", "compat"]
        subprocess.run(argv, env=env(COMPAT_NO_CACHE="1"), check=True, timeout=120)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["gpu-node-a.json", "gpu-node-b.json"]
    out = subprocess.run([sys.executable, "-m", "compat", "fleet", str(tmp_path)], env=env(), capture_output=True,
                         text=True, timeout=120)
    assert "compat fleet: 2 nodes, 2 answered" in out.stdout, out.stderr
    assert "Differences between nodes" not in out.stdout  # the same machine twice
