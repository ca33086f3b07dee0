"""compat smoke's report: explain's reading of a recorded failure, and the four formats against golden files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

from compat.explain.match import explain
from compat.matrix import load_matrix
from compat.model.smoke import ChildOutput, SmokeReport, Stage, StageResult, Status
from compat.report.smoke import diagnosis, render_json, render_junit, render_markdown, render_text
from compat.smoke.parse import failure_output, stage_result
from tests.support.golden import check_golden
from tests.support.paths import GOLDEN

DATA = Path(__file__).parent.parent / "data" / "smoke"


def _child(name: str, returncode: int = 0) -> ChildOutput:
    err = DATA / f"{name}.stderr"
    return ChildOutput(command=f"python child.py {name}", returncode=returncode,
                       stdout=(DATA / f"{name}.stdout").read_text(encoding="utf-8"),
                       stderr=err.read_text(encoding="utf-8") if err.is_file() else "", seconds=12.5)


def _failing_train() -> StageResult:
    child = _child("train-accelerate-too-old", returncode=1)
    result = stage_result(Stage.TRAIN, (child,))
    found = diagnosis(explain(failure_output((child,)).splitlines(keepends=True), load_matrix(), None))
    return StageResult(stage=result.stage, status=result.status, seconds=result.seconds, reason=result.reason,
                       steps=result.steps, output=result.output, diagnosis=found)


def test_an_accelerate_too_old_for_transformers_is_named_with_its_fix():
    found = _failing_train().diagnosis
    assert found is not None
    assert (found.verdict, found.cause_id) == ("known", "transformers-trainer-needs-accelerate")
    assert found.fix is not None and "accelerate" in found.fix


def _report() -> SmokeReport:
    return SmokeReport(
        python="/srv/venv/bin/python",
        stages=(
            stage_result(Stage.IMPORT, (ChildOutput(command="python child.py import", returncode=0, seconds=9.0, stderr="",
                                                    stdout='@@compat-smoke {"detail": "trl 1.16.0", "name": "import trl", '
                                                           '"seconds": 0.2, "status": "pass"}\n'),)),
            stage_result(Stage.DEVICE, (_child("device-h100"),)),
            StageResult(stage=Stage.SERVE, status=Status.SKIPPED, seconds=0.0, reason="vllm is not installed"),
            _failing_train(),
        ),
        budget_s=900.0, seconds=61.25, trainers=("sft",),
    )


def test_text_markdown_junit_and_json_match_their_golden_files():
    report = _report()
    assert report.failed
    check_golden(GOLDEN / "smoke.txt", render_text(report))
    check_golden(GOLDEN / "smoke.md", render_markdown(report))
    junit = render_junit(report)
    check_golden(GOLDEN / "smoke.junit.xml", junit)
    suite = ET.fromstring(junit.split("\n", 1)[1])
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    doc = json.loads(render_json(report))
    assert doc["schema_version"] == 1 and doc["failed"] is True
    assert [s["status"] for s in doc["stages"]] == ["pass", "pass", "skipped", "fail"]
    assert doc["stages"][3]["diagnosis"]["cause_id"] == "transformers-trainer-needs-accelerate"
    check_golden(GOLDEN / "smoke.json", render_json(report).replace(doc["compat_version"], "VERSION"))


_GATE = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/tmp/venv/lib/python3.11/site-packages/transformers/__init__.py", line 27, in <module>
    from . import dependency_versions_check
  File "/tmp/venv/lib/python3.11/site-packages/transformers/dependency_versions_check.py", line 57, in <module>
    require_version_core(deps[pkg])
  File "/tmp/venv/lib/python3.11/site-packages/transformers/utils/versions.py", line 117, in require_version_core
    return require_version(requirement, hint)
  File "/tmp/venv/lib/python3.11/site-packages/transformers/utils/versions.py", line 111, in require_version
    _compare_versions(op, got_ver, want_ver, requirement, pkg, hint)
  File "/tmp/venv/lib/python3.11/site-packages/transformers/utils/versions.py", line 44, in _compare_versions
    raise ImportError(
"""
_STATED = ("ImportError: tokenizers>=0.21,<0.22 is required for a normal functioning of this module, but found "
           "tokenizers==0.19.1.\n")


def test_a_stated_requirement_outranks_the_catch_all_entry_of_the_gate_that_printed_it():
    """The traceback of transformers' import-time version check matches the catch-all dependency-version-gate-failed;
    the message under it states the package, the range and the version found, which says more (a smoke stage's cause)."""
    catalog = SimpleNamespace(signatures=load_matrix(()).signatures)
    stated = diagnosis(explain([_GATE + _STATED], catalog))
    assert stated.cause_id == "stated-version:tokenizers" and stated.verdict == "known"
    assert stated.fix is not None and "tokenizers" in stated.fix
    cut = diagnosis(explain([_GATE], catalog))  # a paste cut inside the gate: the catch-all is all there is
    assert cut.cause_id == "dependency-version-gate-failed"
