"""A minimal valid catalog entry and the loader's input for it: the tests of load-time checks change one key."""

from __future__ import annotations

from compat.matrix._toml import Table

GOOD = {
    "id": "x-fails", "title": "X fails", "severity": "error", "patterns": ["X failed at \\d+"],
    "when": {"packages": {"trl": "<0.1"}}, "cause": "because", "fix": {"requires": ["trl>=0.1"]},
    "refs": ["huggingface/trl#1"],
}
"""An entry the loader accepts."""


def entry_tables(entry: dict) -> list[tuple[Table, str]]:
    """`entry` as load_signatures reads one file holding it (matrix/signatures/x.toml)."""
    return [(Table({"signature": [entry]}, file="matrix/signatures/x.toml", path=""), "x")]
