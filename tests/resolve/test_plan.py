"""compat.resolve.plan: installed facts × lock → ordered steps tied to findings."""

from __future__ import annotations

import json

from compat.model.facts import Distribution
from compat.model.findings import Finding, Fix, Severity, Status
from compat.model.lock import Kept, StepKind, Uncleared
from compat.report.plan import render_json, render_text
from compat.resolve import resolve
from compat.resolve.plan import Installer, default_targets, plan
from tests.support.facts import make_facts

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
    assert default_targets(facts, ("trl", "vllm", "torch", "transformers", "accelerate", "flash-attn")) == ("flash-attn", "trl[vllm]", "vllm")


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
    assert Kept(name="trl", version="0.15.2") in result.kept and Kept(name="torch", version="2.5.1") in result.kept
    assert result.uncleared == (Uncleared(finding="synced-gpus-nocache-rope", advice="use ZeRO-2"),)


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
    assert json.loads(render_json(result))["schema_version"] == 2


def test_nothing_to_do(matrix, extensions):
    installed = (Distribution(name="torch", version="2.13.0", requires=()),)
    facts = make_facts(packages=installed)
    lock = resolve(["torch"], facts, matrix, prefer_installed=True, extensions=extensions)
    result = plan(facts, lock)
    assert result.steps == () and "nothing to change" in render_text(result)


def test_default_targets_and_fix_requirements_corners():
    import dataclasses

    from compat.model.unknown import Unknown
    from compat.resolve.plan import fix_requirements

    assert default_targets(dataclasses.replace(make_facts(), packages=Unknown(reason="not probed")), ("trl",)) == ()
    odd = (
        Distribution(name="trl", version="0.15.2", requires=("not a requirement ((", "vllm==0.7.2; extra == 'vllm'")),
        Distribution(name="vllm", version="0.7.2", requires=()),
    )
    # The installed extra is kept (its tracked packages are all installed); an unreadable line is skipped.
    assert default_targets(make_facts(packages=odd), ("trl", "vllm")) == ("trl[vllm]", "vllm")
    assert default_targets(make_facts(packages=odd[:1]), ("trl", "vllm")) == ("trl",)
    cannot = Finding(id="x", severity=Severity.ERROR, status=Status.CANNOT_CHECK, title="t", cause="c", fix=Fix(requires=("a>=1",)))
    warning = Finding(id="w", severity=Severity.WARNING, status=Status.FOUND, title="t", cause="c", fix=Fix(requires=("trl>=1.16",)))
    assert fix_requirements((FINDING, FINDING, cannot, warning)) == ("vllm==0.7.2",)


def test_torch_move_rebuilds_extensions_last(matrix, own_wheels, extensions):
    installed = (
        Distribution(name="torch", version="2.13.0", requires=()),
        Distribution(name="flash-attn", version="2.8.3", requires=("torch",)),
        Distribution(name="accelerate", version="not-a-version", requires=()),
    )
    facts = make_facts(packages=installed)
    # the project's own wheels only (they stop at torch 2.8): torch moves, so flash-attn is rebuilt after it
    lock = resolve(["flash-attn", "torch"], facts, matrix, extensions=own_wheels)
    result = plan(facts, lock)
    assert [s.kind for s in result.steps] == [StepKind.UNINSTALL, StepKind.TORCH, StepKind.EXTENSIONS]
    assert result.steps[0].command == ("python", "-m", "pip", "uninstall", "-y", "flash-attn")
    assert result.steps[2].command[-2:] == ("--no-build-isolation", "flash-attn==2.8.3")
    assert render_text(result).index("torch==2.8.0") < render_text(result).index("--no-build-isolation")
    # with another publisher's wheels torch stays; an installed flash-attn of another version is replaced by its URL
    facts = make_facts(packages=(Distribution(name="torch", version="2.13.0", requires=()),
                                 Distribution(name="flash-attn", version="2.8.2", requires=("torch",))))
    result = plan(facts, resolve(["flash-attn", "torch"], facts, matrix, extensions=extensions))
    (step,) = [s for s in result.steps if s.kind is StepKind.EXTENSIONS]
    assert step.command[-1].startswith("flash-attn @ https://github.com/mjun0812/flash-attention-prebuild-wheels/")


def test_plan_does_not_move_packages_to_clear_a_warning():
    # doctor rates torch26-weights-only-resume a warning: the plan keeps trl 0.19 and transformers 4.51.3.
    from compat.judge.diagnose import diagnose
    from compat.matrix import load_matrix
    from compat.resolve.plan import fix_requirements

    shipped = load_matrix()
    installed = (
        Distribution(name="torch", version="2.6.0", requires=()),
        Distribution(name="transformers", version="4.51.3", requires=("huggingface-hub>=0.30.0",)),
        Distribution(name="huggingface-hub", version="0.30.2", requires=()),
        Distribution(name="datasets", version="3.6.0", requires=("huggingface-hub>=0.24.0",)),
        Distribution(name="accelerate", version="1.6.0", requires=("torch>=2.0.0",)),
        Distribution(name="trl", version="0.19.0", requires=("accelerate>=1.4.0", "datasets>=3.0.0", "transformers>=4.51.0")),
    )
    facts = make_facts(packages=installed, driver="550.54.15")
    findings = diagnose(facts, shipped)
    assert any(f.id == "torch26-weights-only-resume" and f.status is Status.FOUND for f in findings)
    from compat.resolve import resolve_from_installed

    targets = default_targets(facts, ("torch", "transformers", "accelerate", "trl", "huggingface-hub", "datasets"))
    lock = resolve_from_installed(targets, fix_requirements(findings), facts, shipped)  # as `compat plan` asks
    steps = plan(facts, lock, findings)
    moved = {p.split("==")[0] for s in steps.steps for p in s.packages}
    assert not moved & {"trl", "transformers", "torch"}, steps.steps
    assert ("trl", "0.19.0") in {(k.name, k.version) for k in steps.kept}
