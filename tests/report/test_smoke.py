"""compat smoke's report: explain's reading of a recorded failure, and the four formats against golden files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

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
