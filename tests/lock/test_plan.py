"""compat.resolve.plan: installed facts × lock → ordered steps tied to findings."""

from __future__ import annotations

import json

from compat.model.facts import Distribution
from compat.model.findings import Finding, Fix, Severity, Status
from compat.model.lock import StepKind
from compat.report.plan import render_json, render_text
from compat.resolve.plan import Installer, default_targets, plan
from compat.resolve.resolver import resolve
from tests.lock.conftest import make_facts

BROKEN = (
    Distribution(name="trl", version="0.15.2", requires=("accelerate>=0.34.0", "transformers>=4.46.0", "vllm==0.7.2; extra == 'vllm'")),
    Distribution(name="vllm", version="0.7.0", requires=("torch==2.5.1", "transformers>=4.45.2")),
    Distribution(name="torch", version="2.5.1", requires=()),
    Distribution(name="transformers", version="4.48.2", requires=()),
    Distribution(name="accelerate", version="1.10.1", requires=("torch>=2.0.0",)),
    Distribution(name="flash-attn", version="2.7.4.post1", requires=("torch",)),
)
FINDING = Finding(
    id="grpo-vllm-device-mismatch", severity=Severity.ERROR, status=Status.FOUND, title="t", cause="c",
    fix=Fix(requires=("vllm==0.7.2",), advice="a"),
)
ADVICE_ONLY = Finding(
    id="synced-gpus-nocache-rope", severity=Severity.ERROR, status=Status.FOUND, title="t", cause="c",
    fix=Fix(advice="use ZeRO-2"),
)


def test_default_targets_are_the_top_level_tracked_packages():
    facts = make_facts(packages=BROKEN)
    assert default_targets(facts, ("trl", "vllm", "torch", "transformers", "accelerate", "flash-attn")) == ("flash-attn", "trl", "vllm")


def test_plan_out_of_the_seed_failure_keeps_what_can_stay(matrix, extensions):
    facts = make_facts(gpus=2, cc="8.0", packages=BROKEN)
    lock = resolve(["trl==0.15.2", "vllm==0.7.2", "flash-attn"], facts, matrix, prefer_installed=True, extensions=extensions)
    result = plan(facts, lock, (FINDING, ADVICE_ONLY))
    kinds = [s.kind for s in result.steps]
    assert kinds == [StepKind.PACKAGES]  # torch 2.5.1 stays; only vLLM moves
    step = result.steps[0]
    assert step.packages == ("vllm==0.7.2",)
    assert step.command[:4] == ("python", "-m", "pip", "install")
    assert step.clears == ("grpo-vllm-device-mismatch",)
    assert "trl 0.15.2" in result.kept and "torch 2.5.1" in result.kept
    assert result.uncleared == ("synced-gpus-nocache-rope: use ZeRO-2",)


def test_torch_variant_change_orders_uninstall_torch_packages_extensions(matrix, extensions):
    installed = (
        Distribution(name="torch", version="2.13.0", requires=()),
        Distribution(name="flash-attn", version="2.8.3", requires=("torch",)),
    )
    facts = make_facts(cc="7.0", packages=installed)
    lock = resolve(["torch==2.13.0"], facts, matrix, extensions=extensions)
    result = plan(facts, lock, installer=Installer.UV, python="/venv/bin/python")
    kinds = [s.kind for s in result.steps]
    assert kinds == [StepKind.UNINSTALL, StepKind.TORCH]
    assert result.steps[0].command == ("uv", "pip", "uninstall", "--python", "/venv/bin/python", "torch")
    assert result.steps[1].command[-2:] == ("--index-url", "https://download.pytorch.org/whl/cu126")
    text = render_text(result)
    assert text.index("uninstall") < text.index("torch==2.13.0+cu126")
    assert json.loads(render_json(result))["schema_version"] == 1


def test_nothing_to_do(matrix, extensions):
    installed = (Distribution(name="torch", version="2.13.0", requires=()),)
    facts = make_facts(packages=installed)
    lock = resolve(["torch"], facts, matrix, prefer_installed=True, extensions=extensions)
    result = plan(facts, lock)
    assert result.steps == () and "nothing to change" in render_text(result)
