"""doctor prevents what explain knows: every catalog entry doctor decides from its `when` clause fires on
facts inside that clause, and on none that miss one of its conditions.

The entries come from the loaded catalog (`decided_by_when`, the rule doctor itself applies), so one added
later is covered without editing this file; the facts come from tests/support/exposure.py, which builds them
from the clause alone."""

from __future__ import annotations

import pytest

from compat.judge import checks
from compat.judge.diagnose import decided_by_when, diagnose
from compat.matrix.signatures import Signature
from compat.model.facts import Facts
from compat.model.findings import Status
from tests.support.exposure import cleared, exposed
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
DECIDED = [s for s in MATRIX.signatures if decided_by_when(s)]


def not_decided_by_when(sig: Signature) -> str:
    """Why doctor does not decide an entry from its `when` clause (the one place that says so); "" when it does."""
    if not sig.doctor:
        return "doctor = false: its conditions are too broad to warn about before a run (explain only)"
    if sig.id in checks.OWNED_IDS:
        return ("a built-in check decides it (compat/judge/checks, OWNS) from facts its `when` only summarises: the GPU "
                "table, torch's architecture list, /dev/shm; its own tests in tests/judge cover it")
    if not decided_by_when(sig):
        return "its `when` is empty: it would warn on every environment"
    return ""


def _naming(facts: Facts, sig: Signature, *, status: Status | None = None) -> list[str]:
    return [f"{f.id} ({f.status.value})" for f in diagnose(facts, MATRIX)
            if sig.id in (f.id, *f.see) and status in (None, f.status)]


def test_every_entry_is_decided_by_its_when_or_says_why_not() -> None:
    for sig in MATRIX.signatures:
        assert (sig in DECIDED) is not bool(not_decided_by_when(sig)), sig.id
    assert len(DECIDED) >= 20  # the rule above must not quietly drop the catalog


@pytest.mark.parametrize("sig", DECIDED, ids=lambda s: s.id)
def test_facts_inside_the_clause_get_a_finding_naming_the_entry(sig: Signature) -> None:
    assert _naming(exposed(sig.when), sig, status=Status.FOUND), f"{sig.id}: no finding on facts inside its `when`"


@pytest.mark.parametrize(("sig", "condition", "facts"),
                         [pytest.param(s, c, f, id=f"{s.id}-{c}") for s in DECIDED for c, f in cleared(s.when)])
def test_facts_outside_one_condition_get_none(sig: Signature, condition: str, facts: Facts) -> None:
    assert not _naming(facts, sig), f"{sig.id} reported with {condition} outside its `when`"


def test_every_decided_entry_has_a_condition_to_miss() -> None:
    """An entry whose every condition has no outside would be checked on one side only."""
    assert all(list(cleared(s.when)) for s in DECIDED)
