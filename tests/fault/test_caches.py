"""Caches are keyed by content and re-validated: a wrong entry costs time, never a verdict or a blame."""

from __future__ import annotations

import hashlib
import json

from compat.matrix import load_matrix, shipped_matrix_dir
from compat.sources.probe.torch import MARK, fetch_torch_import
from tests.fault.fakes import compat_cli


def _entry(cache, name: str):
    raw = (shipped_matrix_dir() / "releases" / f"{name}.toml").read_bytes()
    return cache / "parsed" / f"{hashlib.sha256(raw).hexdigest()}.json"


def test_a_wrong_parsed_matrix_entry_is_parsed_again_and_replaced(tmp_path):
    entry = _entry(tmp_path, "vllm")
    entry.parent.mkdir(parents=True)
    for wrong in ({"package": "vllm", "release": [{"version": 7}]}, {"package": "torch", "release": []}, [1, 2], "x"):
        entry.write_text(json.dumps(wrong))
        releases = load_matrix(cache_dir=tmp_path).releases.get("vllm")
        assert releases is not None and len(releases.releases) > 50
        assert json.loads(entry.read_text())["package"] == "vllm"  # the entry was rewritten from the file


def test_a_wrong_cache_entry_does_not_break_lock_or_blame_the_shipped_file(tmp_path):
    entry = _entry(tmp_path, "vllm")
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"package": "vllm", "source": "x", "release": [{"version": "not a version"}]}))
    env = {"COMPAT_CACHE_DIR": str(tmp_path), "COMPAT_NO_CACHE": ""}
    for _ in range(2):  # the second run reads the repaired entry
        result = compat_cli("lock", "vllm==0.7.2", "--gpus", "1xH100", "--driver", "550.54.15",
                            "--python-version", "3.11", env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        assert b"matrix/releases/vllm.toml" not in result.stderr


def test_a_planted_torch_report_is_not_trusted(tmp_path):
    from compat.sources.probe import torch as torch_probe

    key = torch_probe._cache_key("stamp")
    entry = tmp_path / "torch" / f"{key}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(MARK + json.dumps({"installed": "yes", "version": "9" * 5000}) + "\n")
    result = fetch_torch_import(tmp_path / "no-python", timeout=2, stamp="stamp", cache_dir=tmp_path)
    assert result.argv[-1] != "<cached>"  # ran (and failed to run) the child instead
