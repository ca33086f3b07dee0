"""What compat said on a real H100 (tests/data/smoke/device/h100-1x, recorded with bench/device_check.sh; its README
says how): the recorded facts still plan the stages the machine ran, doctor still finds on them what it found there
and no more, and the smoke report there is a valid one in which every GPU stage ran."""

from __future__ import annotations

import json

import jsonschema

from compat.model.facts import load_facts
from compat.model.smoke import Stage
from compat.smoke.plan import plan_stages
from tests.support.paths import ROOT

H100 = ROOT / "tests" / "data" / "smoke" / "device" / "h100-1x"


def _facts():
    return load_facts((H100 / "facts.json").read_text(encoding="utf-8"), origin=str(H100 / "facts.json"))


def test_the_recorded_facts_plan_every_gpu_stage_and_one_rank_on_one_gpu():
    plans = {p.stage: p for p in plan_stages(_facts(), trainers=("sft", "dpo", "grpo"))}
    assert plans[Stage.DEVICE].skip is None and plans[Stage.KERNELS].skip is None
    assert plans[Stage.SERVE].skip == "vllm is not installed"
    train = plans[Stage.TRAIN]
    assert train.skip is None and train.args == ("sft", "dpo", "grpo", "--lora")
    assert train.launch is not None and train.launch.processes == 1
    assert "2 processes: 1 GPU visible, so the launched run has 1" in train.launch.not_exercised


def test_doctor_on_the_recorded_facts_finds_what_it_found_there(doctor):
    recorded = json.loads((H100 / "doctor.json").read_text(encoding="utf-8"))
    code, report = doctor("--facts", str(H100 / "facts.json"))
    assert code == 1 and report["summary"] == recorded["summary"]
    # The one error is true: the wheels were installed there with --no-deps, and compat's own uv was left out.
    assert [f["id"] for f in report["findings"]] == [f["id"] for f in recorded["findings"]] == ["missing-requirement"]
    assert report["findings"][0]["fix"]["requires"] == ["uv>=0.8.0"]


def test_the_recorded_smoke_report_is_valid_and_every_gpu_stage_ran():
    report = json.loads((H100 / "smoke.json").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "compat" / "schemas" / "smoke.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    stages = {s["stage"]: s for s in report["stages"]}
    assert not report["failed"]
    assert {name for name, s in stages.items() if s["status"] == "pass"} == {
        "import", "device", "collective", "kernels", "train"}
    device = {step["name"]: step for step in stages["device"]["steps"]}
    assert device["init cuda:0"]["detail"] == "NVIDIA H100 80GB HBM3 sm_90"
    assert all(device[f"matmul {t} cuda:0"]["status"] == "pass" for t in ("fp16", "bf16", "fp8"))
    trained = {step["name"]: step["detail"] for step in stages["train"]["steps"]}
    assert {"sft", "dpo", "grpo", "sft+lora"} <= set(trained)
