"""The format table (compat.report.formats): every command renders every format it offers, `--help` lists
them, inputs cannot break out of a Markdown block or forge a workflow command, and -o / --json behave."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

from compat import api
from compat.cli import app
from compat.explain.match import Explanation, explain
from compat.explain.scan import Engine
from compat.matrix import load_matrix
from compat.model.findings import sort_findings
from compat.report.formats import FORMATS, Format, LockFormat, Presentation, render
from tests.golden.inputs import findings, h100_box

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS_300 = ROOT / "tests" / "data" / "envs" / "trl-vllm-300.facts.json"
LOG = (
    "Traceback (most recent call last):\n"
    "ImportError: /opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
)
HOSTILE = "evil\n::error title=forged::owned </details><script>x</script> ``` | cell"


@pytest.fixture(scope="module")
def explanation() -> Explanation:
    return explain(LOG.splitlines(keepends=True), load_matrix(), h100_box(), engine=Engine.PYTHON)


@pytest.fixture(scope="module")
def results(explanation: Explanation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One result of each command, from recorded facts (no probe, no network)."""
    from tests.fleet import nodes
    from tests.report.test_smoke import _report

    settings = api.read_settings()
    facts = api.Environment(facts_file=FACTS_300)
    declared = api.Declared(gpus="8xH100", driver=None, launcher=None)
    doctor = api.DoctorResult(facts=h100_box(), findings=sort_findings(findings()), failed=True)
    plan = api.plan(api.PlanRequest(environment=facts, declared=declared, settings=settings, find_config=False))
    lock = api.lock(api.LockRequest(targets=("trl",), environment=facts, declared=declared, settings=settings, find_config=False))
    cluster = nodes.write_cluster(tmp_path_factory.mktemp("fleet"), nodes.cluster(2))
    fleet = api.fleet(api.FleetRequest(directory=cluster, settings=settings, find_config=False))
    return {"doctor": doctor, "report": doctor, "explain": explanation, "plan": plan, "lock": lock, "smoke": _report(),
            "fleet": fleet}


def test_the_table_names_each_command_once_with_a_default_it_offers():
    assert set(FORMATS) == {"doctor", "report", "explain", "plan", "lock", "smoke", "fleet"}
    for command, offer in FORMATS.items():
        assert offer.default in offer.names, command
        family = LockFormat if command == "lock" else Format
        assert set(offer.names) <= {f.value for f in family}, command
    # what issue 22 asks of the table: explain and plan reach an issue and a CI log too
    for command in ("explain", "plan"):
        assert {"markdown", "github"} <= set(FORMATS[command].names)
    assert FORMATS["doctor"].names == tuple(f.value for f in Format)


@pytest.mark.parametrize("command,fmt", [(c, f) for c, offer in FORMATS.items() for f in offer.names])
def test_every_command_renders_every_format_it_offers(results, command, fmt):
    out = render(command, fmt, results[command], Presentation(report_url="https://example.org/compat"))
    assert out.endswith("\n") and out.strip()
    if fmt in ("json", "sarif"):
        json.loads(out)
    elif fmt == "junit":
        ET.fromstring(out)
    elif fmt == "github":
        # every line is a workflow command, but the summary at the end
        lines = out.splitlines()
        assert all(line.startswith("::") for line in lines[:-1]) and lines[-1].startswith("compat ")
    elif fmt == "markdown" and command in ("doctor", "report", "explain", "fleet"):
        assert out.startswith("<details>") and out.rstrip().endswith("</details>")


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_help_lists_the_formats_of_the_table(command):
    result = CliRunner().invoke(app, [command, "--help"], prog_name="compat", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert FORMATS[command].help() in " ".join(result.output.split())


def _hostile(explanation: Explanation) -> Explanation:
    first = explanation.matches[0]
    sig = dataclasses.replace(first.signature, title=HOSTILE, cause=HOSTILE)
    line = dataclasses.replace(first.lines[0], text=HOSTILE)
    return dataclasses.replace(explanation, matches=(dataclasses.replace(first, signature=sig, lines=(line,)),))


def test_explain_markdown_keeps_an_input_inside_the_block(explanation):
    out = render("explain", "markdown", _hostile(explanation))
    # the log line sits in a fenced block (shown as typed, tags too), which an input's fence cannot close
    body = out.split("```text\n", 1)[1].split("\n```\n", 1)[0]
    assert "```" not in body and "\n" not in body and "::error" in body
    prose = out.replace(body, "")
    assert prose.count("</details>") == 1 and prose.rstrip().endswith("</details>")
    assert "<script>" not in prose and "&lt;script&gt;" in prose


def test_explain_github_cannot_forge_a_workflow_command(explanation):
    out = render("explain", "github", _hostile(explanation))
    assert not re.search(r"^::error title=forged", out, re.M)
    assert all(line.startswith("::") or line.startswith("compat explain:") for line in out.splitlines())


def test_plan_formats_keep_an_input_inside(results):
    plan = results["plan"]
    step = dataclasses.replace(plan.steps[0], command=("pip", "install", HOSTILE))
    hostile = dataclasses.replace(plan, steps=(step, *plan.steps[1:]))
    out = render("plan", "github", hostile)
    assert not re.search(r"^::error title=forged", out, re.M)
    md = render("plan", "markdown", hostile)
    fenced = md.split("```sh\n", 1)[1].rsplit("\n```\n", 1)[0]
    assert "```" not in fenced


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), prog_name="compat")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return 2, str(result.exception)
    return result.exit_code, result.output


def test_json_is_an_alias_of_format_json_and_conflicts_are_usage_errors():
    code, out = _cli("doctor", "--facts", str(FACTS_300), "--json", "--no-config")
    assert code in (0, 1) and json.loads(out)["schema_version"]
    code, out = _cli("doctor", "--facts", str(FACTS_300), "--json", "--format", "markdown", "--no-config")
    assert code == 2 and "--json and --format" in out


def test_output_writes_the_rendered_report_to_a_file(tmp_path):
    target = tmp_path / "compat.sarif"
    code, out = _cli("doctor", "--facts", str(FACTS_300), "--format", "sarif", "-o", str(target), "--no-config")
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"
