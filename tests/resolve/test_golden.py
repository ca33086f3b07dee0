"""Golden files for the lock and plan renderers: every output byte of a table of cases.

Regenerate after a deliberate change with `COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/resolve/test_golden.py --no-cov`
and read the diff: each changed line is an output change to explain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import ResolutionError
from compat.model.facts import Distribution, Facts
from compat.model.findings import Finding, Fix, Severity, Status
from compat.model.unknown import Unknown
from compat.report.lock import LockFormat, render_conflict, render_lock
from compat.report.plan import render_json as plan_json
from compat.report.plan import render_text as plan_text
from compat.resolve import resolve
from compat.resolve.plan import plan
from tests.support.facts import make_facts
from tests.support.golden import check_golden

GOLDEN = Path(__file__).parent / "data" / "golden"


def _check(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text)


def _no_gpus_known(facts: Facts) -> Facts:
    hw = dataclasses.replace(facts.hardware, gpus=Unknown(reason="nvidia-smi not found"), driver=Unknown(reason="no driver"))
    return dataclasses.replace(facts, hardware=hw)


def _one_cc_unknown(facts: Facts) -> Facts:
    gpus = facts.hardware.gpus
    assert not isinstance(gpus, Unknown)
    odd = dataclasses.replace(gpus[0], index=1, compute_capability=Unknown(reason="not reported"))
    return dataclasses.replace(facts, hardware=dataclasses.replace(facts.hardware, gpus=(*gpus, odd)))


def _no_gpus(facts: Facts) -> Facts:
    return dataclasses.replace(facts, hardware=dataclasses.replace(facts.hardware, gpus=(), driver=None))


FIXTURE_CASES: dict[str, tuple[list[str], dict, Callable[[Facts], Facts] | None]] = {
    "grpo-h100-r580": (["trl[vllm]"], {"gpus": 8}, None),
    "grpo-h100-r550": (["trl[vllm]"], {"gpus": 8, "driver": "550.54.15"}, None),
    "trl0152-a100": (["trl[vllm]==0.15.2"], {"gpus": 2, "cc": "8.0"}, None),
    "device-mismatch-conflict": (["trl==0.15.2", "vllm<0.7.1"], {"gpus": 2, "cc": "8.0"}, None),
    "guided-decoding-constraint": (["trl==0.15.2", "vllm"], {"gpus": 2, "cc": "8.0"}, None),
    "online-dpo-conflict": (["trl<0.17"], {"gpus": 2, "launcher": "python"}, None),
    "rtx5090-old-vllm": (["vllm==0.7.2"], {"cc": "12.0"}, None),
    "rtx5090-vllm-090": (["vllm==0.9.0"], {"cc": "12.0"}, None),
    "v100-torch-213": (["torch==2.13.0"], {"cc": "7.0"}, None),
    "r470-torch": (["torch"], {"cc": "8.0", "driver": "470.82.01"}, None),
    "r470-torch-minor-compat": (["torch"], {"cc": "8.0", "driver": "470.82.01", "minor_compat": True}, None),
    "python310": (["trl[vllm]"], {"python": "3.10"}, None),
    "both-sides": (["trl[vllm]==1.16.0", "vllm==0.9.0"], {}, None),
    "yanked-pinned": (["vllm==0.31.1"], {}, None),
    "flash-attn": (["flash-attn", "torch", "numpy>=2"], {}, None),
    "flash-attn-v100": (["flash-attn"], {"cc": "7.0"}, None),
    "unknown-hardware": (["trl[vllm]"], {}, _no_gpus_known),
    "one-cc-unknown": (["vllm"], {"gpus": 2}, _one_cc_unknown),
    "no-gpus": (["torch==2.13.0"], {}, _no_gpus),
    "old-python-torch": (["torch==2.5.1"], {"python": "3.13"}, None),
    "no-release": (["vllm==9.9.9"], {}, None),
}


@pytest.mark.parametrize("case", sorted(FIXTURE_CASES))
def test_fixture_lock(matrix, extensions, case):
    targets, kw, edit = FIXTURE_CASES[case]
    kw = dict(kw)
    minor = kw.pop("minor_compat", False)
    facts = make_facts(**kw)
    if edit is not None:
        facts = edit(facts)
    try:
        got = resolve(targets, facts, matrix, extensions=extensions, minor_compat=minor)
    except ResolutionError as exc:
        _check(f"{case}.conflict.txt", render_conflict(targets, exc))
        return
    _check(f"{case}.txt", render_lock(got, LockFormat.REQUIREMENTS))
    _check(f"{case}.constraints.txt", render_lock(got, LockFormat.CONSTRAINTS))
    _check(f"{case}.json", render_lock(got, LockFormat.JSON))


BROKEN = (
    Distribution(name="trl", version="0.15.2", requires=("accelerate>=0.34.0", "transformers>=4.46.0", "vllm==0.7.2; extra == 'vllm'")),
    Distribution(name="vllm", version="0.7.0", requires=("torch==2.5.1", "transformers>=4.45.2")),
    Distribution(name="torch", version="2.5.1", requires=()),
    Distribution(name="transformers", version="4.48.2", requires=()),
    Distribution(name="accelerate", version="1.10.1", requires=("torch>=2.0.0",)),
    Distribution(name="flash-attn", version="2.7.4.post1", requires=("torch",)),
)
FINDINGS = (
    Finding(id="grpo-vllm-device-mismatch", severity=Severity.ERROR, status=Status.FOUND, title="t", cause="c",
            fix=Fix(requires=("vllm==0.7.2",), advice="a")),
    Finding(id="synced-gpus-nocache-rope", severity=Severity.ERROR, status=Status.FOUND, title="t", cause="c",
            fix=Fix(advice="use ZeRO-2")),
)


def test_plan_seed(matrix, extensions):
    facts = make_facts(gpus=2, cc="8.0", packages=BROKEN)
    lock = resolve(["trl==0.15.2", "vllm==0.7.2", "flash-attn"], facts, matrix, prefer_installed=True, extensions=extensions)
    result = plan(facts, lock, FINDINGS)
    _check("plan-seed.txt", plan_text(result))
    _check("plan-seed.json", plan_json(result))


def test_plan_torch_variant(matrix, extensions):
    installed = (
        Distribution(name="torch", version="2.13.0", requires=()),
        Distribution(name="flash-attn", version="2.8.3", requires=("torch",)),
    )
    facts = make_facts(cc="7.0", packages=installed)
    lock = resolve(["torch==2.13.0"], facts, matrix, extensions=extensions)
    _check("plan-variant.txt", plan_text(plan(facts, lock)))


def test_plan_with_a_constraint(matrix, extensions):
    facts = make_facts(gpus=2, cc="8.0", packages=BROKEN)
    lock = resolve(["trl==0.15.2", "vllm"], facts, matrix, extensions=extensions)
    _check("plan-constraint.txt", plan_text(plan(facts, lock, FINDINGS)))


CLI_CASES = {
    "cli-grpo-r580": ["trl[vllm]", "--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.12"],
    "cli-grpo-r550": ["trl[vllm]", "--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.12"],
    "cli-grpo-r550-json": ["trl[vllm]", "--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.12", "--format", "json"],
    "cli-rtx5090-vllm072": ["vllm==0.7.2", "--gpus", "1xRTX5090", "--driver", "580.95.05", "--python-version", "3.11"],
    "cli-v100-torch": ["torch", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    "cli-r470-torch": ["torch", "--gpus", "1xA100", "--driver", "470.82.01", "--python-version", "3.11"],
    "cli-r470-torch-minor": ["torch", "--gpus", "1xA100", "--driver", "470.82.01", "--python-version", "3.11", "--minor-compat"],
    "cli-t4-flash-attn": ["flash-attn", "--gpus", "1xT4", "--driver", "550.54.15", "--python-version", "3.11"],
    "cli-torch260-h100": ["torch==2.6.0", "--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.12"],
    "cli-torch260-r470": ["torch==2.6.0", "--gpus", "8xH100", "--driver", "470.82.01", "--python-version", "3.12"],
    "cli-vllm-l4-r535": ["vllm", "--gpus", "2xL4", "--driver", "535.104.05", "--python-version", "3.11", "--format", "constraints"],
    "cli-vllm-cuda13-torch": ["vllm==0.8.5.post1", "torch==2.13.0", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.11"],
    "cli-v100-vllm-031": ["vllm==0.31.0", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    "cli-v100-vllm": ["vllm", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    "cli-v100-vllm-range": ["vllm>=0.20", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11"],
    # R520 runs CUDA <= 11.8: vLLM's and xformers' +cu118 builds, by URL, beside torch's cu118 build.
    "cli-v100-r520-vllm": ["vllm", "--gpus", "1xV100", "--driver", "520.61.05", "--python-version", "3.10"],
    "cli-v100-r520-vllm-073-constraints": ["vllm==0.7.3", "--gpus", "1xV100", "--driver", "520.61.05", "--python-version", "3.10",
                                           "--format", "constraints"],
    "cli-flash-torch213": ["flash-attn", "torch==2.13.0", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.12"],
    "cli-flash-h100-r580": ["flash-attn", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.12"],
    "cli-trl-py39": ["trl==1.16.0", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.9"],
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_lock(case):
    result = CliRunner().invoke(app, ["lock", *CLI_CASES[case]])
    _check(f"{case}.txt", f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
