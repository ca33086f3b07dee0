"""The CI formats: GitHub workflow commands, SARIF 2.1.0 (validated against the OASIS schema) and JUnit XML."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from compat.model.config import Ignore, Ignored, Waivers
from compat.model.findings import Finding, Fix, Severity, Status, observed
from compat.report.ci import render_github, render_junit, render_sarif
from tests.support.paths import FACTS_300

SARIF_SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "data" / "schemas" / "sarif-schema-2.1.0.json").read_text())

FOUND = Finding(id="nccl-p2p-hang-pcie", severity=Severity.WARNING, status=Status.FOUND, title="P2P over PCIe: hangs, 100%",
                cause="line one\nline two", fix=Fix(requires=("x>=1",), advice="Set NCCL_P2P_DISABLE=1."),
                evidence=(observed("2 × RTX 4090"),), refs=("NVIDIA/nccl#1",))
UNDECIDED = Finding(id="nccl-shm-too-small", severity=Severity.ERROR, status=Status.CANNOT_CHECK, title="shm", cause="c",
                    fix=Fix(), unknown=("no /dev/shm",))
IGNORED = Finding(id="gpu-without-bf16", severity=Severity.INFO, status=Status.FOUND, title="no bf16", cause="c", fix=Fix())
WAIVERS = Waivers(ignored=(Ignored(finding=IGNORED, ignore=Ignore(id="gpu-without-bf16", reason="fp16 on purpose")),),
                  expired=(Ignore(id="nccl-p2p-hang-pcie", reason="r", until=__import__("datetime").date(2020, 1, 1)),))


def test_github_annotations_are_escaped_workflow_commands():
    out = render_github((FOUND, UNDECIDED), waivers=WAIVERS, strict=True, report_url="https://x.org/c", file="compat.toml")
    lines = out.splitlines()
    assert lines[0].startswith("::warning file=compat.toml,title=compat%3A P2P over PCIe%3A hangs%2C 100%25 [nccl-p2p-hang-pcie]::")
    assert "line one%0Aline two" in lines[0] and lines[0].endswith("See https://x.org/c/findings/nccl-p2p-hang-pcie.html")
    assert lines[1].startswith("::error file=compat.toml,title=compat%3A cannot check [nccl-shm-too-small]::")
    assert "(--strict: this fails the run)" in lines[1]
    assert lines[2] == "::notice file=compat.toml,title=compat%3A ignored [gpu-without-bf16]::no bf16. Ignored: fp16 on purpose"
    assert lines[3].startswith("::error file=compat.toml,title=compat%3A expired ignore [nccl-p2p-hang-pcie]::")
    assert lines[-1] == "compat doctor: 0 error(s), 1 warning(s), 0 info, 1 could not run"
    assert render_github((UNDECIDED,)).startswith("::notice title=compat%3A cannot check")


def test_sarif_validates_against_the_published_schema_and_carries_suppressions():
    doc = json.loads(render_sarif((FOUND, UNDECIDED), waivers=WAIVERS, report_url="https://x.org/c", file="requirements.txt"))
    jsonschema.validate(doc, SARIF_SCHEMA)
    run = doc["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted(rules) == ["gpu-without-bf16", "nccl-p2p-hang-pcie", "nccl-shm-too-small"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["nccl-p2p-hang-pcie"]["level"] == "warning" and by_rule["nccl-p2p-hang-pcie"]["kind"] == "fail"
    assert by_rule["nccl-shm-too-small"] == {**by_rule["nccl-shm-too-small"], "kind": "open", "level": "none"}
    assert by_rule["gpu-without-bf16"]["suppressions"][0]["justification"] == "fp16 on purpose"
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    assert run["tool"]["driver"]["rules"][1]["helpUri"] == "https://x.org/c/findings/nccl-p2p-hang-pcie.html"
    assert run["invocations"][0]["toolExecutionNotifications"][0]["level"] == "error"


def test_sarif_of_a_real_run_validates(cli):
    code, out = cli("doctor", "--format", "sarif", "--facts", str(FACTS_300), "--gpus", "8xH100")
    assert code == 1
    doc = json.loads(out)
    jsonschema.validate(doc, SARIF_SCHEMA)
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} >= {"grpo-fsdp-ref-model-on-cpu", "missing-requirement"}
    with pytest.raises(jsonschema.ValidationError):  # the schema does bite
        jsonschema.validate({**doc, "version": "2.0.0"}, SARIF_SCHEMA)


def test_sarif_without_a_file_still_gives_every_result_a_location(cli):
    doc = json.loads(render_sarif((FOUND, UNDECIDED), waivers=WAIVERS))
    jsonschema.validate(doc, SARIF_SCHEMA)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
    assert uris == {"pyproject.toml"}
    code, out = cli("doctor", "--format", "sarif", "--facts", str(FACTS_300), "--gpus", "8xH100", "--no-config")
    assert code == 1
    results = json.loads(out)["runs"][0]["results"]
    assert results and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(FACTS_300.name)
                           for r in results)


def test_junit_fails_what_fails_the_run():
    suite = ET.fromstring(render_junit((FOUND, UNDECIDED), waivers=WAIVERS, strict=True, fail_on=Severity.ERROR))
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert suite.get("tests") == "3" and suite.get("failures") == "2" and suite.get("skipped") == "1"
    assert cases["nccl-p2p-hang-pcie"].find("failure") is not None  # below the threshold, but its ignore expired
    assert cases["nccl-shm-too-small"].find("failure").get("type") == "cannot-check"
    assert cases["gpu-without-bf16"].find("skipped").get("message") == "ignored: fp16 on purpose"
    relaxed = ET.fromstring(render_junit((FOUND, UNDECIDED)))
    assert relaxed.get("failures") == "0" and relaxed.get("skipped") == "2"
    empty = ET.fromstring(render_junit(()))
    assert empty.get("tests") == "1" and empty.find("testcase").get("name") == "doctor"


def test_junit_of_a_real_run(cli):
    code, out = cli("doctor", "--format", "junit", "--facts", str(FACTS_300), "--report-url", "https://x.org")
    assert code == 1
    suite = ET.fromstring(out)
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failure = cases["grpo-fsdp-ref-model-on-cpu"].find("failure")
    assert failure.text.endswith("See https://x.org/findings/grpo-fsdp-ref-model-on-cpu.html")
    # The missing dependencies are one finding (issue 12), so one failing case, not one per package.
    assert int(suite.get("failures")) == 2 and cases["missing-requirement"].find("failure") is not None
    assert len(cases) == sum(1 for _ in suite.iter("testcase"))
