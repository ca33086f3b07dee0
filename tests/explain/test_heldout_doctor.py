"""bench/heldout_doctor.py measures whether doctor, given the versions a thread states, flags the failure explain
names for its log (issue 23, item 6). Checked on a two-log corpus: one whose stated pins doctor decides (vLLM built
against another torch), one whose stated pins say nothing about the failure."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.support.paths import DATA, ROOT

_spec = importlib.util.spec_from_file_location("heldout_doctor", ROOT / "bench" / "heldout_doctor.py")
assert _spec is not None and _spec.loader is not None
heldout_doctor = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("heldout_doctor", heldout_doctor)  # its dataclasses look their module up
_spec.loader.exec_module(heldout_doctor)

MANIFEST = '''
[[log]]
id = "vllm-abi"
source = "https://example.invalid/1"
date = "2025-01-01"
label = "environment"
why = "test"
packages = { vllm = "0.6.3", torch = "2.4.1+cu121", python = "3.11" }

[[log]]
id = "quiet"
source = "https://example.invalid/2"
date = "2025-01-01"
label = "environment"
why = "test"
packages = { transformers = "4.45.2" }

[[log]]
id = "user"
source = "https://example.invalid/3"
date = "2025-01-01"
label = "not-environment"
why = "test"
packages = { torch = "2.4.1" }
'''


def test_stated_pins_skip_machine_keys_and_bad_versions() -> None:
    stated = {"torch": "2.4.1+cu121", "python": "3.11", "cuda": "12.1", "vllm": "not a version", "trl": " 0.9.6"}
    assert heldout_doctor.pins(stated) == ("torch==2.4.1+cu121", "trl==0.9.6")


def test_a_failure_doctor_decides_from_the_stated_pins_counts_as_prevented(tmp_path: Path) -> None:
    (tmp_path / "manifest.toml").write_text(MANIFEST, encoding="utf-8")
    line = (DATA / "logs" / "vllm-c-ext-torch-mismatch.log").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "vllm-abi.log").write_text(line + "\n", encoding="utf-8")
    (tmp_path / "quiet.log").write_text("ValueError: something else entirely\n", encoding="utf-8")
    (tmp_path / "user.log").write_text("ValueError: mine\n", encoding="utf-8")
    rows = {r.id: r for r in heldout_doctor.measure(tmp_path)}
    assert set(rows) == {"vllm-abi", "quiet"}  # environment logs with stated pins only
    assert rows["vllm-abi"].prevented and "torch-pin-broken-extension" in rows["vllm-abi"].flagged
    assert not rows["quiet"].prevented
    assert "missing-requirement" not in rows["quiet"].flagged  # what the stated set leaves out is not counted
