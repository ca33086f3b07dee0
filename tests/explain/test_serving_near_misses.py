"""Lines that look like the serving and Ray signatures of serving_2026b.toml but are not those failures:
Python's generic AF_UNIX error (not Ray's temp-dir check), sglang's CUDA-graph start line (not its
failure), Ray attaching to a cluster normally. Each must match nothing."""

from __future__ import annotations

from types import SimpleNamespace

from compat.explain.match import explain
from tests.support.paths import LOGS

NEAR_MISSES = LOGS / "negative" / "serving-near-misses.log"


def test_each_near_miss_line_matches_no_signature(catalog: SimpleNamespace) -> None:
    lines = NEAR_MISSES.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) >= 3
    for line in lines:
        result = explain([line], catalog)
        assert result.matches == (), (line, [m.signature.id for m in result.matches])
