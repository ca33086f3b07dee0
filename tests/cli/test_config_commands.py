"""One config for every command: lock, plan, explain and facts take the hardware `[tool.compat]`
declares, as doctor does; the command line wins."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from compat import api
from compat.cli import app
from compat.errors import UsageError
from compat.model.unknown import Unknown
from tests.support.paths import DATA

runner = CliRunner()
FACTS = DATA / "envs" / "trl-vllm-300.facts.json"


def _project(tmp_path, monkeypatch, table: str = 'gpus = "8xH100"\ndriver = "550.54.15"\n') -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "train"\n\n[tool.compat]\n{table}')
    monkeypatch.chdir(tmp_path)
    return tmp_path / "pyproject.toml"


def test_lock_takes_the_declared_hardware_and_the_command_line_wins(tmp_path, monkeypatch):
    _project(tmp_path, monkeypatch)
    made = runner.invoke(app, ["lock", "trl[vllm]", "--python-version", "3.12"])
    assert made.exit_code == 0, made.output
    assert "#   8x H100 (sm_90)" in made.stdout and "#   driver 550.54.15" in made.stdout
    flags = runner.invoke(app, ["lock", "trl[vllm]", "--python-version", "3.12", "--gpus", "2xA100"])
    assert flags.exit_code == 0, flags.output
    assert "#   2x A100" in flags.stdout and "#   driver 550.54.15" in flags.stdout  # the driver still from the file


def test_a_bad_config_stops_lock_with_the_file_and_key(tmp_path, monkeypatch):
    _project(tmp_path, monkeypatch, 'gpu = "8xH100"\n')
    made = runner.invoke(app, ["lock", "trl[vllm]", "--python-version", "3.12", "--gpus", "cpu"])
    assert isinstance(made.exception, UsageError)  # exit 2 through compat's main
    assert "tool.compat.gpu: unknown key" in str(made.exception)
    ignored = runner.invoke(app, ["lock", "trl[vllm]", "--python-version", "3.12", "--gpus", "8xH100",
                                  "--driver", "550.54.15", "--no-config"])
    assert ignored.exit_code == 0, ignored.output


def test_facts_plan_and_explain_requests_read_the_named_config(tmp_path, monkeypatch):
    config = _project(tmp_path, monkeypatch, 'gpus = "2xA100"\ndriver = "550.54.15"\nlauncher = "torchrun"\n')
    snapshot = api.Environment(facts_file=FACTS)
    facts = api.facts(api.FactsRequest(environment=snapshot, config=config))
    assert not isinstance(facts.hardware.gpus, Unknown)
    assert {g.name for g in facts.hardware.gpus} == {"A100"} and len(facts.hardware.gpus) == 2
    assert facts.hardware.driver == "550.54.15"
    assert api.facts(api.FactsRequest(environment=snapshot, config=config, find_config=False)).hardware.driver == "550.54.15"
    # no config named and none looked for: the snapshot as it was saved
    assert api.facts(api.FactsRequest(environment=snapshot)).hardware.gpus != facts.hardware.gpus
    # What is tested is the config, not the search's time bound: a starved CI core must not end the search.
    monkeypatch.setenv("COMPAT_SEARCH_SECONDS", "600")
    plan = runner.invoke(app, ["plan", "--facts", str(FACTS), "--json"])
    assert plan.exit_code in (0, 1), plan.output
    assert "A100" in json.dumps(json.loads(plan.stdout)["lock"])
    # explain ranks for the declared GPU: torch 2.5.1 has no sm_120 kernels for an RTX 5090
    _project(tmp_path, monkeypatch, 'gpus = "1xRTX5090"\ndriver = "570.86.10"\n')
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    args = ["explain", str(log), "--facts", str(FACTS), "--json"]
    explained = runner.invoke(app, args)
    assert explained.exit_code == 0, explained.output
    assert "GPU 0 RTX5090 (sm_120)" in explained.stdout
    assert "GPU 0 RTX5090" not in runner.invoke(app, [*args, "--no-config"]).stdout


def test_fleet_takes_fail_on_from_the_config(tmp_path, monkeypatch):
    from compat.model.facts import load_facts
    from tests.fleet import nodes

    box = load_facts((DATA / "fleet" / "cpu-vm.json").read_text(encoding="utf-8"))
    cluster = nodes.write_cluster(tmp_path / "nodes", {"a": box, "b": nodes.with_env(box, NCCL_IB_HCA="mlx5_0")})
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["fleet", str(cluster)]).exit_code == 0  # a warning: below the default threshold
    (tmp_path / "compat.toml").write_text('fail-on = "warning"\n')
    assert runner.invoke(app, ["fleet", str(cluster)]).exit_code == 1
    assert runner.invoke(app, ["fleet", str(cluster), "--fail-on", "error"]).exit_code == 0  # the command line wins
    assert runner.invoke(app, ["fleet", str(cluster), "--no-config"]).exit_code == 0
