"""Where the suite's recorded inputs live, named once so a test file can move between folders without
counting parents of its own path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
DATA = ROOT / "tests" / "data"
"""Recorded outputs and inputs shared by every folder of the suite."""
LOGS = DATA / "logs"
SCRIPTS = DATA / "scripts"
FACTS_300 = DATA / "envs" / "trl-vllm-300.facts.json"
"""A recorded TRL + vLLM environment on 8×H100 with 300 installed distributions (see tests/data/envs/SOURCE)."""
GOLDEN = ROOT / "tests" / "golden" / "data"
"""Golden files of the renderers (tests/golden) and of the commands other folders render."""
