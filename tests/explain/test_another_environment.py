"""A log the installed releases contradict comes from another environment (pasted from a cluster node, or written
before an upgrade): explain answers it as the log alone would, and says so. The installed versions never turn a named
failure into an unknown (compat/timeline/overrides.py's `answer_call`, compat/explain/verdict.py)."""

from __future__ import annotations

import dataclasses

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from compat.report.explain import api_text, render_text
from compat.timeline.index import load_api
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiKind, Drift, Missing
from tests.explain.test_explain import _facts
from tests.explain.test_stated_versions import LINES
from tests.support.paths import LOGS

API_LOGS = sorted((LOGS / "api").glob("*.log"))


def _before(package: str, release: str) -> str:
    releases = load_api(package).releases
    return releases[releases.index(release) - 1]


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
    # A release of the callee that has what the log says is missing; for a required argument the log's call does not
    # pass, one from before the parameter, which cannot require it.
    required = a.question.missing is Missing.POSITIONAL and a.kind is ApiKind.PARAM
    has_it = _before(a.package, a.present[0].first) if required else a.present[-1].last
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


# QwenLM/Qwen3#205: "already updated transformers to 4.37.2, but it still fails", the KeyError raised in transformers'
# own auto mapping; the transformers that ran was an older one the environment also held.
SHADOWED = """transformers==4.37.2
Traceback (most recent call last):
  File "/home/user/finetune.py", line 344, in train
    config = transformers.AutoConfig.from_pretrained(
  File "/home/user/env/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py", line 1022, in from_pretrained
    config_class = CONFIG_MAPPING[config_dict["model_type"]]
  File "/home/user/env/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py", line 723, in __getitem__
    raise KeyError(key)
KeyError: 'qwen2'
"""


def test_a_release_the_log_reports_that_has_what_failed_is_not_the_one_that_ran(catalog) -> None:
    (error,) = _errors(catalog, SHADOWED)
    a = error.api
    assert error.verdict is ErrorVerdict.KNOWN and a is not None
    assert (a.drift, a.key, a.fix, a.shadowed, a.elsewhere) == (
        Drift.CALLEE_TOO_OLD, "qwen2", (), "4.37.2", None)
    assert "the log reports transformers 4.37.2, which has it: the transformers that ran is another release" in " ".join(api_text(a))


def test_a_reported_release_that_lacks_it_is_the_one_that_ran(catalog) -> None:
    # huggingface/transformers#34161: transformers 4.44.2 reported, qwen2_vl added in 4.45.0.
    (error,) = _errors(catalog, SHADOWED.replace("4.37.2", "4.44.2").replace("'qwen2'", "'qwen2_vl'"))
    a = error.api
    assert a is not None and (a.drift, a.installed, a.shadowed) == (Drift.CALLEE_TOO_OLD, "4.44.2", None)
    assert a.fix == ("transformers>=4.45.0",)
