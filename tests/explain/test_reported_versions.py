"""Versions a log reports outside its errors (an issue template's environment lines, `pip freeze`) are the installed
releases the API timeline's answer takes where the facts give none (compat/explain/reported.py): an answer never asks
for a floor the reported release already passes."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.reported import reported_version
from compat.timeline.records import Drift

# huggingface/trl#2445: its environment report and its error (trl 0.13.0 added DPOTrainer.log's start_time).
_REPORT = "- Transformers version: 4.47.0\n- TRL version: {trl}\n"
_ERROR = "TypeError: DPOTrainer.log() takes 2 positional arguments but 3 were given\n"


@pytest.mark.parametrize(("line", "found"), [
    ("- Transformers version: 4.47.0", ("transformers", "4.47.0")),  # huggingface/trl#2445
    ("- vLLM version: dev", None),  # hiyouga/LlamaFactory#5966: no release named
    ("- PyTorch version (GPU?): 2.2.0+cu121 (True)", None),  # a label the line's shape does not bound: not read
    ("- PyTorch version: 2.4.0+cu121 (GPU)", ("torch", "2.4.0+cu121")),  # hiyouga/LlamaFactory#5966
    ("- `transformers` version: 4.37.2", ("transformers", "4.37.2")),  # hiyouga/LlamaFactory#2532
    ("trl version: 0.13.0.dev0", ("trl", "0.13.0.dev0")),  # NVIDIA/workbench-example-llama3-finetune#1
    ("transformers==4.46.0", ("transformers", "4.46.0")),  # pip freeze's form
    ("- Python version: 3.10.15", None),  # the host, not a package the timeline indexes
    ("requires transformers==4.46.0 but you have", None),  # a requirement, not a report
])
def test_a_reported_version_is_read(line, found):
    assert reported_version(line) == found


def test_the_reported_release_is_the_installed_one(catalog):
    (error,) = explain([_REPORT.format(trl="0.12.1") + "\n" + _ERROR], catalog).errors
    assert error.api is not None and error.api.installed == "0.12.1"
    assert error.api.drift is Drift.CALLEE_TOO_OLD and error.api.fix[0] == "trl>=0.13.0"


def test_no_floor_the_reported_release_already_passes(catalog):
    # The same error beside a report of a trl that has the call: the log is not of that environment, or another
    # release runs (`shadowed`); the index says which side the one that ran is on, and never tells it to install what
    # it reports.
    (error,) = explain([_REPORT.format(trl="0.13.0") + "\n" + _ERROR], catalog).errors
    assert error.api is not None and (error.api.shadowed, error.api.installed) == ("0.13.0", None)
    assert error.api.drift is Drift.CALLEE_TOO_OLD and error.api.fix == ()



def test_a_package_reported_at_two_releases_gives_none(catalog):
    # A freeze before and after an upgrade: which release raised is not known. The first was taken as installed (trl
    # 0.12.1 here, though the second report already passes the floor trl>=0.13.0 the answer gives).
    log = _REPORT.format(trl="0.12.1") + "trl==0.13.0\n" + "\n" + _ERROR
    (error,) = explain([log], catalog).errors
    assert error.api is not None and error.api.installed is None


def test_the_same_release_with_and_without_its_local_tag_is_one_report(catalog):
    log = _REPORT.format(trl="0.12.1") + "trl==0.12.1+local\n" + "\n" + _ERROR
    (error,) = explain([log], catalog).errors
    assert error.api is not None and error.api.installed == "0.12.1"
