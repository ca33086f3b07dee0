"""An overlay's catastrophic pattern is refused at load, with the file and the key, before any engine
(Hyperscan or the pure-Python scanner) runs it. The four overlays are explained in one child (tests/support/main.py's
`compat_batch`): a pattern that did run would hang, and the child's timeout bounds that."""

from __future__ import annotations

import pytest

from tests.fault.fakes import one_line_error
from tests.support.main import compat_batch

SIGNATURE = """[[signature]]
id = "company-slow"
title = "A company failure"
severity = "error"
doctor = false
patterns = ['''{pattern}''']
when = {{}}
cause = "x"
fix = {{ advice = "y" }}
refs = ["company/repo#1"]
"""


PATTERNS = [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)+$", r"^(x+x+)+y"]


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    """Each pattern's `compat explain --matrix OVERLAY` result (None if the child was killed at the bound first)."""
    runs = []
    for pattern in PATTERNS:
        root = tmp_path_factory.mktemp("overlay")
        overlay = root / "overlay" / "signatures"
        overlay.mkdir(parents=True)
        (overlay / "company.toml").write_text(SIGNATURE.format(pattern=pattern))
        log = root / "train.log"
        log.write_text("RuntimeError: " + "a" * 40 + "!\n" + "x" * 40 + "\n")
        runs.append(["explain", str(log), "--no-env", "--matrix", str(root / "overlay")])
    return dict(zip(PATTERNS, compat_batch(runs, timeout=120), strict=True))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_catastrophic_overlay_pattern_is_refused_with_file_and_key(explained, pattern):
    result = explained[pattern]
    assert result is not None, "not refused within the bound"
    assert result.returncode == 2, result.stderr[-500:]
    line = one_line_error(result)
    assert "company.toml: signature[0].patterns[0]: has " in line and "backtracks" in line
