"""Every --json output validates against its shipped schema, and the shipped schemas are current.

After a deliberate change to an output (a new field in a record, a new key in explain's JSON):
regenerate with `COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/report/test_schemas.py --no-cov`,
read the diff, and add a sample of the new output to SAMPLES below if none covers it.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from compat.report.schemas import OUTPUTS, render_schema, schemas
from tests.support.golden import check_golden
from tests.support.paths import FACTS_300

ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = ROOT / "compat" / "schemas"
GOLDEN = ROOT / "tests" / "golden" / "data"
LOCKS = ROOT / "tests" / "resolve" / "data" / "golden"

# Recorded outputs per schema; the golden tests keep them equal to what compat prints today.
SAMPLES: dict[str, list[Path]] = {
    "facts": [GOLDEN / "facts-h100.json.txt", GOLDEN / "facts-unknown.json.txt", FACTS_300],
    "doctor": [GOLDEN / "doctor-h100.json.txt", GOLDEN / "doctor-unknown.json.txt"],
    "explain": [GOLDEN / "explain-h100.json.txt", GOLDEN / "explain-nofacts.json.txt", GOLDEN / "explain-none.json.txt"],
    "lock": sorted(p for p in LOCKS.glob("*.json") if not p.name.startswith("plan-")),
    "plan": sorted(LOCKS.glob("plan-*.json")),
    "smoke": [GOLDEN / "smoke.json"],
}


def _schema(name: str) -> dict:
    return json.loads((SHIPPED / f"{name}.schema.json").read_text())


@pytest.mark.parametrize("name", OUTPUTS)
def test_shipped_schema_is_current_and_valid(name):
    text = render_schema(schemas()[name])
    path = SHIPPED / f"{name}.schema.json"
    check_golden(path, text)
    jsonschema.Draft202012Validator.check_schema(json.loads(text))


def test_every_output_has_a_schema_and_samples():
    # fleet's schema is generated and checked beside its command (tests/fleet).
    shipped = {p.name.removesuffix(".schema.json") for p in SHIPPED.glob("*.schema.json")} - {"fleet"}
    assert set(SAMPLES) == set(OUTPUTS) == shipped
    assert all(SAMPLES[name] for name in OUTPUTS)


@pytest.mark.parametrize(("name", "sample"), [(n, p) for n, paths in SAMPLES.items() for p in paths],
                         ids=lambda v: v.name if isinstance(v, Path) else v)
def test_recorded_output_validates(name, sample):
    jsonschema.validate(json.loads(sample.read_text()), _schema(name))


def test_live_outputs_validate(cli, tmp_path):
    (tmp_path / "compat.toml").write_text(
        'ignore = [{ id = "missing-requirement", reason = "base image", until = "2020-01-01" },'
        ' { id = "grpo-fsdp-ref-model-on-cpu", reason = "beta=0" }]\n'
    )
    _, doctor = cli("doctor", "--json", "--facts", str(FACTS_300), "--gpus", "8xH100")
    report = json.loads(doctor)
    assert report["ignored"] and report["expired_ignores"]
    jsonschema.validate(report, _schema("doctor"))
    _, lock = cli("lock", "vllm==0.7.2", "--gpus", "1xH100", "--driver", "550.54.15", "--python-version", "3.11", "--format", "json")
    jsonschema.validate(json.loads(lock), _schema("lock"))


def test_the_schemas_bite():
    facts = json.loads((GOLDEN / "facts-h100.json.txt").read_text())
    facts["hardware"]["gpus"][0]["memory_mib"] = "80 GB"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(facts, _schema("facts"))
    doctor = json.loads((GOLDEN / "doctor-h100.json.txt").read_text())
    doctor["findings"][0]["severity"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doctor, _schema("doctor"))
