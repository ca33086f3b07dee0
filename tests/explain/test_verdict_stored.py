"""explain decides the verdict of a log and stores it in the Explanation; the renderers only read it."""

from __future__ import annotations

import json

import pytest

from compat.explain.match import explain, overall_verdict
from compat.explain.records import Explanation
from compat.explain.verdict import ErrorVerdict
from compat.report.explain import render_json, render_text
from tests.support.paths import LOGS


@pytest.mark.parametrize(("log", "known", "verdict"), [
    ("cuda-driver-too-old.log", True, ErrorVerdict.KNOWN),
    ("roots/unknown-cuda.log", False, ErrorVerdict.UNKNOWN_ENVIRONMENT),
    ("negative/user-nameerror.log", False, ErrorVerdict.NOT_ENVIRONMENT),
])
def test_the_verdict_is_decided_when_the_log_is_ranked(catalog, log, known, verdict):
    result = explain([(LOGS / log).read_bytes()], catalog)
    assert (result.known, result.verdict) == (known, verdict)
    assert overall_verdict(result.matches, result.errors) == (known, verdict)


def test_the_renderers_show_the_stored_verdict_without_deciding_it_again():
    # No match and no error, yet a stored verdict: a renderer that decided again would say unknown-environment.
    stored = Explanation(matches=(), lines_scanned=3, environment="no environment facts", known=False,
                         verdict=ErrorVerdict.NOT_ENVIRONMENT)
    assert json.loads(render_json(stored))["verdict"] == "not-environment"
    assert "Verdict: not-environment:" in render_text(stored)
