"""bench/device_check.sh, the prepared GPU check: every compat command line it runs parses against the real CLI,
and it writes each output, stderr and exit code into the folder it is given (run here with a fake compat)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

import compat.cli.commands  # noqa: F401  (registers every command on the app)
from compat.cli import app
from compat.smoke.plan import parse_trainers
from tests.support.paths import ROOT

SCRIPT = ROOT / "bench" / "device_check.sh"

FAKE = """#!{python}
import json, pathlib, sys
with open({log!r}, "a", encoding="utf-8") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
pathlib.Path(sys.argv[sys.argv.index("-o") + 1]).write_text("{{}}", encoding="utf-8")
sys.exit(1 if sys.argv[1] == "doctor" else 0)  # doctor's findings: a verdict the script must not stop at
"""


# The parser's errors, from whichever click typer ships with (typer 0.2x vendors its own).
USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _parse(argv: list[str]) -> Any:
    """The context compat's own parser makes of `compat ARGV` (options converted and checked), without running it."""
    group: Any = typer.main.get_command(app)
    command = group.get_command(group.context_class(group), argv[0])
    assert command is not None, f"compat has no command {argv[0]!r}"
    return command.make_context(argv[0], argv[1:])


def _run(tmp_path: Path, **env: str) -> tuple[Path, list[list[str]]]:
    log = tmp_path / "calls.jsonl"
    fake = tmp_path / "compat"
    fake.write_text(FAKE.format(python=sys.executable, log=str(log)), encoding="utf-8")
    fake.chmod(0o755)
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(SCRIPT), str(out), sys.executable], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COMPAT": str(fake), **env})
    assert done.returncode == 0, done.stderr
    return out, [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_every_compat_line_of_the_device_check_parses_against_the_cli(tmp_path):
    out, calls = _run(tmp_path, BUDGET="300", TRAINERS="sft,grpo,online-dpo")
    assert [c[0] for c in calls] == ["doctor", "facts", "smoke"]
    contexts = {c[0]: _parse(c) for c in calls}
    assert contexts["doctor"].params["json_out"] and contexts["smoke"].params["json_out"]
    assert contexts["smoke"].params["budget"] == 300.0
    assert parse_trainers(contexts["smoke"].params["trainer"]) == ("sft", "grpo", "online-dpo")
    for name, code in (("doctor.json", "1"), ("facts.json", "0"), ("smoke.json", "0")):
        assert (out / name).read_text(encoding="utf-8") == "{}"
        assert (out / f"{name}.rc").read_text(encoding="utf-8").strip() == code
        assert (out / f"{name}.stderr").exists()
    assert (out / "nvidia-smi.txt").exists() and (out / "versions.txt").exists()


def test_the_parse_check_rejects_what_the_cli_rejects():
    with pytest.raises(USAGE_ERROR, match="--budget-seconds"):
        _parse(["smoke", "--budget-seconds", "300"])
    with pytest.raises(typer.BadParameter):
        _parse(["smoke", "--budget", "1"])  # below the minimum
    with pytest.raises(USAGE_ERROR):
        _parse(["facts", "--json"])  # facts writes JSON without being asked: no such option


def test_the_device_check_stays_one_short_script():
    assert len(SCRIPT.read_text(encoding="utf-8").splitlines()) <= 60


DEVICE = ROOT / "tests" / "data" / "smoke" / "device"
"""Folders bench/device_check.sh wrote on lent GPU machines, kept as they came (tests/data/smoke/README.md)."""

RECORDED = sorted(p for p in DEVICE.glob("*") if (p / "smoke.json").is_file()) if DEVICE.is_dir() else []


@pytest.mark.parametrize("folder", RECORDED, ids=[p.name for p in RECORDED])
def test_a_recorded_gpu_check_reads_back_against_the_schemas_and_the_facts_model(folder):
    import jsonschema

    from compat.model.facts import load_facts
    from compat.report.smoke import render_text
    from compat.sources.fleet.smoke import read_smoke_report

    text = (folder / "smoke.json").read_text(encoding="utf-8")
    for name in ("smoke", "doctor", "facts"):
        schema = json.loads((ROOT / "compat" / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
        jsonschema.validate(json.loads((folder / f"{name}.json").read_text(encoding="utf-8")), schema)
    report = read_smoke_report(text)
    assert not isinstance(report, str), report
    # a GPU machine ran the GPU stages: the device stage was not skipped for want of a GPU
    assert next(s for s in report.stages if s.stage.value == "device").status.value != "skipped"
    assert render_text(report).startswith("compat smoke: ")
    facts = load_facts((folder / "facts.json").read_text(encoding="utf-8"), origin=str(folder / "facts.json"))
    assert facts.visible_gpus() not in (0, None)


def _doc_compat_lines(page: Path) -> list[list[str]]:
    """Each `compat ...` command in the page's ```sh blocks (continuations joined), cut at a redirection or `||`."""
    import re
    import shlex

    lines: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while "compat" in words:
                words = words[words.index("compat") + 1:]
                end = next((i for i, w in enumerate(words) if w in (">", "||", "|", "&&", ";", "{")), len(words))
                lines.append(words[:end])
    return lines


def test_the_compat_lines_of_the_smoke_page_parse_against_the_cli():
    lines = _doc_compat_lines(ROOT / "docs" / "smoke.md")
    assert {w[0] for w in lines} >= {"smoke", "facts", "fleet"} and len(lines) >= 10
    for words in lines:
        _parse(words)
