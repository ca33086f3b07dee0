"""The real resolver agrees with every pin of the sample locks (network; skipped by default)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.network
def test_pip_agrees_with_the_sample_locks():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "verify_locks.py")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
