"""The documented CI job and the pre-commit hook run what they say, and are well-formed."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import jsonschema
import yaml

from tests.report.test_ci_formats import SARIF_SCHEMA

ROOT = Path(__file__).resolve().parent.parent.parent
WORKFLOW = ROOT / "examples" / "github-actions" / "compat.yml"
PROJECT = {
    "pyproject.toml": '[project]\nname = "trainer"\n\n[tool.compat]\ngpus = "1xRTX5090"\ndriver = "570.86.10"\n'
                      'ignore = [{ id = "missing-requirement", reason = "the image installs the rest" }]\n',
    "requirements.txt": "torch==2.5.1\nvllm==0.7.2\ntrl==0.15.2\n",
}


def _project(path: Path) -> None:
    for name, text in PROJECT.items():
        (path / name).write_text(text)


def test_the_pre_commit_hook_runs_its_entry_on_the_matched_file(cli, tmp_path):
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["compat-doctor"]
    hook = hooks[0]
    assert {"id", "name", "entry", "language"} <= set(hook) and hook["language"] == "python"
    assert re.search(hook["files"], "requirements.txt") and not re.search(hook["files"], "docs/requirements.txt")
    _project(tmp_path)
    argv = shlex.split(hook["entry"]) + ["requirements.txt"]  # pre-commit appends the matched file names
    assert argv[0] == "compat"
    code, out = cli(*argv[1:])
    assert code == 1  # torch 2.5.1 has no sm_120 kernels for the declared RTX 5090
    assert "The GPU's compute capability is missing from the torch build" in out
    assert "\nignored: missing-requirement (error): the image installs the rest\n" in out  # one grouped finding


def test_the_workflow_is_a_valid_job_whose_compat_steps_run(cli, tmp_path):
    doc = yaml.safe_load(WORKFLOW.read_text())
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true; GitHub reads it as the key
    assert set(triggers) == {"pull_request", "push"}
    (job,) = doc["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and job["permissions"]["security-events"] == "write"
    for step in job["steps"]:
        assert ("uses" in step) != ("run" in step), step
        if "uses" in step:
            assert re.fullmatch(r"[\w-]+/[\w/-]+@v\d+", step["uses"]), step["uses"]
    upload = job["steps"][-1]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    runs = [step["run"] for step in job["steps"] if "run" in step and step["run"].startswith("compat ")]
    assert len(runs) == 2
    _project(tmp_path)
    for run in runs:
        argv = shlex.split(run.split(">")[0])
        code, out = cli(*argv[1:])
        assert code == 1, out
        if "sarif" in argv:
            sarif = json.loads(out)
            jsonschema.validate(sarif, SARIF_SCHEMA)
            results = sarif["runs"][0]["results"]
            assert any(r.get("suppressions") for r in results)  # the config's ignore reached the SARIF
            assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "requirements.txt"
        else:
            assert out.startswith("::error file=requirements.txt,title=compat%3A")


def test_the_ci_recipe_in_the_docs_is_the_tested_workflow():
    assert WORKFLOW.read_text().strip() in (ROOT / "docs" / "ci.md").read_text()
