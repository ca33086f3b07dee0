"""`compat fleet --smoke`: each node's `compat smoke` report folded into the fleet report, from recorded node reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import CompatError
from compat.model.facts import load_facts
from compat.model.smoke import SmokeReport
from compat.sources.fleet.smoke import read_smoke_report, smoke_command
from tests.fleet import nodes

RECORDED = Path(__file__).parents[1] / "data" / "fleet" / "smoke"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["fleet", *args])
    if isinstance(result.exception, CompatError):
        return 2, str(result.exception)
    return result.exit_code, result.output


def _cluster(tmp_path: Path, names: tuple[str, ...], reports: dict[str, str], *, cpu: bool = False) -> Path:
    box = load_facts((RECORDED.parent / "cpu-vm.json").read_text(encoding="utf-8")) if cpu else nodes.base()
    directory = nodes.write_cluster(tmp_path / "facts", {n: box for n in names})
    (directory / "smoke").mkdir()
    for node, recorded in reports.items():
        shutil.copy(RECORDED / recorded, directory / "smoke" / f"{node}.json")
    return directory


def test_recorded_reports_decode():
    passed = read_smoke_report((RECORDED / "node-01.json").read_text(encoding="utf-8"))
    assert isinstance(passed, SmokeReport) and not passed.failed
    failed = read_smoke_report((RECORDED / "node-02.json").read_text(encoding="utf-8"))
    assert isinstance(failed, SmokeReport) and failed.failed
    assert read_smoke_report("[1, 2]") == "not a compat smoke report (not a JSON object)"
    assert str(read_smoke_report('{"python": 3}')).startswith("not a compat smoke report: ")


def test_which_node_failed_which_stage_with_the_explain_verdict(tmp_path):
    directory = _cluster(tmp_path, ("node-01", "node-02", "node-03"), {"node-01": "node-01.json", "node-02": "node-02.json"})
    code, out = _run(str(directory), "--smoke")
    assert code == 1, out
    assert "compat smoke on every node (2 of 3 failed)" in out
    assert "node-02: train failed (failed: sft)" in out
    assert "explain: known [transformers-trainer-needs-accelerate]" in out
    assert "node-03: no smoke report" in out
    assert "✓ passed on node-01 (1 of 3): collective, import, kernels, train" in out
    doc = json.loads(_run(str(directory), "--smoke", "--json")[1])
    by_node = {n["node"]: n for n in doc["node_smoke"]}
    train = next(s for s in by_node["node-02"]["stages"] if s["stage"] == "train")
    assert train["status"] == "fail" and train["diagnosis"]["cause_id"] == "transformers-trainer-needs-accelerate"
    assert train["steps"] == [] and train["output"] is None  # the node's own report keeps them
    assert by_node["node-03"]["error"] == "no smoke report from this node"
    github = _run(str(directory), "--smoke", "--format", "github")[1]
    assert "title=compat fleet%3A node-02%3A train failed (failed%3A sft)::explain: known [transformers-" in github


def test_every_node_passing_keeps_the_verdict_and_without_smoke_nothing_changes(tmp_path):
    directory = _cluster(tmp_path, ("node-01", "node-02"), {"node-01": "node-01.json", "node-02": "node-01.json"}, cpu=True)
    code, out = _run(str(directory), "--smoke")
    assert code == 0, out
    assert "compat smoke on every node (0 of 2 failed)" in out and "passed on node-01 and node-02 (2 of 2)" in out
    code, plain = _run(str(directory))
    assert code == 0 and "compat smoke on every node" not in plain


def test_smoke_needs_the_reports_or_slurm(tmp_path):
    directory = nodes.write_cluster(tmp_path / "facts", {"node-01": nodes.base()})
    code, out = _run(str(directory), "--smoke")
    assert code == 2 and "holds no smoke reports" in out and "compat smoke --json -o" in out
    assert _run("--ray", "127.0.0.1:1", "--smoke")[0] == 2


def test_slurm_runs_compat_smoke_once_per_node_into_the_shared_folder():
    argv = smoke_command(Path("shared/run"), budget=300.0, python="/venv/bin/python")
    assert argv[:3] == ["srun", "--ntasks-per-node=1", "--kill-on-bad-exit=0"]
    assert argv[3:] == ["/venv/bin/python", "-m", "compat", "smoke", "--json", "--budget", "300", "-o",
                        str(Path("shared/run/smoke/%N.json"))]


def test_slurm_smoke_reports_are_folded_in(tmp_path, monkeypatch: pytest.MonkeyPatch):
    import compat.sources.fleet.slurm as slurm
    import compat.sources.fleet.smoke as smoke
    from compat.model.fleet import Member
    from compat.sources.fleet.directory import read_members

    facts = _cluster(tmp_path, ("gpu-01", "gpu-02"), {"gpu-01": "node-02.json"})
    members: list[Member] = read_members(facts)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setattr(slurm, "gather_slurm", lambda out, timeout: (members, 2))
    monkeypatch.setattr(smoke, "run_slurm_smoke", lambda out, timeout, budget: (
        smoke.read_node_smoke(facts), "srun exited 1"))
    code, out = _run("--slurm", "--smoke", "--out", str(facts))
    assert code == 1
    assert "gpu-01: train failed (failed: sft)" in out
    assert "gpu-02: no smoke report" in out and "srun exited 1" in out


def test_the_json_with_node_smoke_matches_the_shipped_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "compat" / "schemas" / "fleet.schema.json").read_text())
    directory = _cluster(tmp_path, ("node-01", "node-02"), {"node-02": "node-02.json"})
    jsonschema.validate(json.loads(_run(str(directory), "--smoke", "--json")[1]), schema)


@pytest.mark.slow  # srun (faked) runs the facts step and then `compat smoke` on two nodes
def test_slurm_smoke_through_a_fake_srun_writes_and_reads_one_report_per_node(tmp_path, monkeypatch: pytest.MonkeyPatch):
    import os

    bin_dir = Path(__file__).with_name("bin")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4243")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "gpu-[01-02]")
    monkeypatch.setenv("SLURM_NTASKS", "2")
    monkeypatch.setenv("FAKE_SLURM_NODES", "gpu-01 gpu-02")
    out_dir = tmp_path / "run"
    code, out = _run("--slurm", "--smoke", "--smoke-budget", "10", "--out", str(out_dir), "--timeout", "120")
    assert code in (0, 1), out  # a verdict, not a usage error or a bug
    assert sorted(p.name for p in (out_dir / "smoke").glob("*.json")) == ["gpu-01.json", "gpu-02.json"], out
    assert "compat smoke on every node" in out and "no smoke report" not in out
    for path in (out_dir / "smoke").glob("*.json"):
        assert isinstance(read_smoke_report(path.read_text(encoding="utf-8")), SmokeReport)
