"""How many real lines back each entry: the lines of its saved log (tests/data/logs/<id>.log) that its patterns
match. One line from one thread is a thin basis for a pattern; an entry with fewer than three says why in
`few_lines`. The entries saved before the rule are listed in tests/data/logs/fewer-than-three.txt, a list that
may only shrink: an entry added later brings three lines or a reason."""

from __future__ import annotations

import re

import pytest

from compat.errors import MatrixError
from compat.matrix.signatures import Signature, load_signatures
from tests.support.matrix import shipped_matrix
from tests.support.paths import LOGS
from tests.support.signature_entries import GOOD, entry_tables

MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
BASELINE = LOGS / "fewer-than-three.txt"
ENOUGH = 3


def real_lines(sig: Signature) -> int:
    """Distinct lines of the entry's saved log that one of its patterns matches."""
    lines = (LOGS / f"{sig.id}.log").read_text(encoding="utf-8").splitlines()
    return len({line.strip() for line in lines if any(re.search(p, line, re.ASCII) for p in sig.patterns)})


def _baseline() -> set[str]:
    text = BASELINE.read_text(encoding="utf-8")
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def test_an_entry_with_fewer_than_three_real_lines_says_why() -> None:
    thin = {s.id: real_lines(s) for s in MATRIX.signatures if s.patterns and not s.few_lines and real_lines(s) < ENOUGH}
    new = sorted(set(thin) - _baseline())
    assert not new, f"fewer than {ENOUGH} real lines and no `few_lines` reason: " + ", ".join(f"{i} ({thin[i]})" for i in new)


def test_the_list_of_older_thin_entries_only_shrinks() -> None:
    """An entry that gained lines or a reason leaves the list, so the list stays the debt it names."""
    by_id = {s.id: s for s in MATRIX.signatures}
    stale = sorted(i for i in _baseline() if i not in by_id or by_id[i].few_lines or real_lines(by_id[i]) >= ENOUGH)
    assert not stale, f"remove from {BASELINE.name}: {', '.join(stale)}"


def test_every_entry_with_patterns_has_at_least_one_real_line() -> None:
    assert [s.id for s in MATRIX.signatures if s.patterns and real_lines(s) == 0] == []




@pytest.mark.parametrize(("change", "message"), [
    ({"few_lines": ""}, r"signature\[0\]\.few_lines: must not be empty"),
    ({"few_lines": 1}, r"signature\[0\]\.few_lines: expected a string"),
    ({"few_lines": "one thread", "patterns": [], "doctor": True}, r"signature\[0\]\.few_lines: an entry without patterns"),
])
def test_a_bad_few_lines_reason_is_refused_with_file_and_key(change: dict, message: str) -> None:
    with pytest.raises(MatrixError, match=r"^matrix/signatures/x\.toml: " + message):
        load_signatures(entry_tables({**GOOD, **change}))
    (sig,) = load_signatures(entry_tables({**GOOD, "few_lines": "printed once per run"}))
    assert sig.few_lines == "printed once per run"
