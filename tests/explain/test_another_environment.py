"""A log the installed releases contradict comes from another environment (pasted from a cluster node, or written
before an upgrade): explain answers it as the log alone would, and says so. The installed versions never turn a named
failure into an unknown (compat/timeline/overrides.py's `answer_call`, compat/explain/verdict.py)."""

from __future__ import annotations

import dataclasses

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from compat.report.explain import api_text, render_text
from compat.timeline.links import ApiSource
from compat.timeline.records import Drift
from tests.explain.test_explain import _facts
from tests.explain.test_stated_versions import LINES
from tests.support.paths import LOGS

API_LOGS = sorted((LOGS / "api").glob("*.log"))


def _errors(catalog, text: str, facts=None):
    return explain([text.encode()], catalog, facts, api=ApiSource()).errors


@pytest.mark.parametrize("log", API_LOGS, ids=lambda p: p.stem)
def test_an_installed_release_that_has_what_the_log_lacks_leaves_the_logs_answer(catalog, log) -> None:
    text = log.read_text(encoding="utf-8")
    alone = [e for e in _errors(catalog, text) if e.api is not None and e.api.drift in (Drift.CALLEE_TOO_OLD, Drift.CALLEE_TOO_NEW)]
    if not alone:
        pytest.skip("the log alone does not name a side too old or too new")
    a = alone[0].api
    assert a is not None
    has_it = a.present[-1].last  # a release of the callee that has what the log says is missing
    here = [e for e in _errors(catalog, text, _facts({a.package: has_it})) if e.first_line == alone[0].first_line]
    assert here and here[0].verdict is ErrorVerdict.KNOWN
    assert here[0].api == dataclasses.replace(a, elsewhere=has_it)
    assert "the log comes from another environment" in api_text(here[0].api)[1]


def test_an_api_log_contradicted_here_is_among_them(catalog) -> None:
    # The parametrized test above must not skip every log: at least the Trainer keyword log names a side.
    decided = [log for log in API_LOGS if any(e.api is not None and e.api.drift is Drift.CALLEE_TOO_OLD
                                              for e in _errors(catalog, log.read_text(encoding="utf-8")))]
    assert len(decided) >= 3


def test_a_stated_requirement_the_installed_version_meets_is_still_named(catalog) -> None:
    # huggingface-hub>=0.19.3,<1.0 required, 0.17.1 found; 0.26.0 installed here: the message is from another
    # environment, and it still names the side to change there, with a command that is not this interpreter's.
    line = LINES[2][1]
    (error,) = _errors(catalog, line, _facts({"huggingface-hub": "0.26.0"}))
    assert error.verdict is ErrorVerdict.KNOWN
    (stated,) = error.versions
    assert stated.satisfied is True and stated.command == "python -m pip install 'huggingface-hub>=0.19.3,<1.0'"
    assert "the message is from another environment" in render_text(
        explain([line.encode()], catalog, _facts({"huggingface-hub": "0.26.0"}), api=ApiSource()))
