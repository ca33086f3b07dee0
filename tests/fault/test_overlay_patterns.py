"""An overlay's catastrophic pattern is refused at load, with the file and the key, before any engine
(Hyperscan or the pure-Python scanner) runs it."""

from __future__ import annotations

import pytest

from tests.fault.fakes import compat_cli, one_line_error

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


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)+$", r"^(x+x+)+y"])
def test_a_catastrophic_overlay_pattern_is_refused_with_file_and_key(tmp_path, pattern):
    overlay = tmp_path / "overlay" / "signatures"
    overlay.mkdir(parents=True)
    (overlay / "company.toml").write_text(SIGNATURE.format(pattern=pattern))
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: " + "a" * 40 + "!\n" + "x" * 40 + "\n")
    result = compat_cli("explain", str(log), "--no-env", "--matrix", str(tmp_path / "overlay"), timeout=60)
    assert result.returncode == 2, result.stderr[-500:]
    line = one_line_error(result)
    assert "company.toml: signature[0].patterns[0]: has " in line and "backtracks" in line
