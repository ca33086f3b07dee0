"""The shipped API index agrees with the real wheels on additions and removals (network; skipped by default).

bench/api_verify.py picks keys at random whose first or last release is a boundary and checks the
release on each side by plain text search in the files the index reads. Its committed record
(bench/data/api_verify.json) holds the 30 checks made for the shipped data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.network
def test_additions_and_removals_agree_with_the_wheels(tmp_path):
    url = os.environ.get("COMPAT_TEST_INDEX_URL")  # PIP_INDEX_URL, which tests/conftest.py hides from the other tests
    if not url:
        pytest.skip("PIP_INDEX_URL names no index")
    out = tmp_path / "verify.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "api_verify.py"), "--index-url", url, "--count", "12", "--seed", "7", "--out", str(out)],
        capture_output=True, text=True, check=False,
    )
    record = json.loads(out.read_text())
    assert record["agree"] >= record["count"] - 1, proc.stdout + proc.stderr  # the text check is a heuristic: one miss allowed


def test_committed_record_of_the_thirty_checks():
    record = json.loads((ROOT / "bench" / "data" / "api_verify.json").read_text())
    assert record["count"] == 30
    assert len({c["package"] for c in record["checks"]}) >= 8
    for check in record["checks"]:
        assert check["agree"] is True or check["note"], check  # every disagreement is explained
