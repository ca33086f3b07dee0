"""No machine kind is second class: lock, doctor and plan on every kind of machine the README speaks
of (none declared on this GPU-less host, CPU, one consumer GPU, 8xH100 on R535/R550/R580, a V100 on
R470, Blackwell) for the README's lock targets end in a verdict or a one-line reason, never in a bug.

In process, through compat.api, as the CLI would: a `CompatError` is the CLI's exit 2, a `Conflict`
its exit 1 (lock) or 4 (plan); anything else raised is what the CLI turns into exit 3. With the settings the CLI
reads (`api.read_settings()`: the run's private cache, tests/conftest.py), as the CLI would: the matrix is parsed once,
not once per cell.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat import api
from compat.errors import CompatError
from compat.model.facts import dump_facts
from tests.support.fakeenv import make_env

# (--gpus, --driver); (None, None): nothing declared, on this GPU-less test host.
MACHINES = {
    "undeclared": (None, None),
    "cpu": ("cpu", None),
    "none": ("none", None),
    "rtx4090-r550": ("1xRTX4090", "550.54.15"),
    "8xh100-r535": ("8xH100", "535.183.01"),
    "8xh100-r550": ("8xH100", "550.54.15"),
    "8xh100-r580": ("8xH100", "580.65.06"),
    "v100-r470": ("1xV100", "470.256.02"),
    "rtx5090-r575": ("1xRTX5090", "575.57.08"),
}

# The lock targets the README shows.
TARGETS = {
    "trl": ("trl",),
    "trl[vllm]": ("trl[vllm]",),
    "vllm": ("vllm",),
    "vllm==0.7.2": ("vllm==0.7.2",),
    "trl[vllm]==0.15.1": ("trl[vllm]==0.15.1",),
    "vllm==0.8.5.post1+deepspeed": ("vllm==0.8.5.post1", "deepspeed==0.16.8"),
}

# Cells that are known to end in a bug, each marked xfail(strict=True) with its reason, so a fix flips them: none.
KNOWN_BUGS: dict[tuple[str, str], pytest.MarkDecorator] = {}


def _outcome(call: Callable[[], object]) -> str:
    """What the CLI would make of `call()`: an exit-code class, or the bug it would report as exit 3."""
    try:
        result = call()
    except CompatError as exc:
        text = str(exc)
        assert text.strip() and "\n" not in text.strip(), f"a usage error must be one line: {text!r}"
        return "usage"
    except Exception as exc:  # the CLI's exit 3
        pytest.fail(f"exit 3: {type(exc).__name__}: {exc}"[:500])
    if isinstance(result, api.Conflict):
        assert result.error is not None  # the chain of causes the CLI prints
        return "conflict"
    return "ok"


def _cells(machines: dict[str, tuple[str | None, str | None]]) -> list[Any]:
    cells: list[Any] = []
    for machine in machines:
        for target in TARGETS:
            # Nothing declared probes this host (seconds each): one target says what it says for all.
            if machine == "undeclared" and target != "trl":
                continue
            marks = [KNOWN_BUGS[(machine, target)]] if (machine, target) in KNOWN_BUGS else []
            cells.append(pytest.param(machine, target, marks=marks, id=f"{machine}-{target}"))
    return cells


@pytest.mark.parametrize(("machine", "target"), _cells(MACHINES))
def test_lock_never_ends_in_a_bug(machine: str, target: str) -> None:
    gpus, driver = MACHINES[machine]
    outcome = _outcome(lambda: api.lock(api.LockRequest(
        targets=TARGETS[target], declared=api.Declared(gpus=gpus, driver=driver), python_version="3.11", settings=api.read_settings(),
    )))
    if machine == "undeclared":
        assert outcome == "usage"  # no GPU here: the one line says to declare the machine
    if machine in ("8xh100-r550", "8xh100-r580") and target in ("trl", "trl[vllm]", "vllm"):
        assert outcome == "ok"  # the README's own examples lock


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The facts of an environment with vLLM 0.7.2 (and the torch stack it pins), probed once from a
    fake venv so each machine's doctor and plan reads a file, not the host. Not the README's trl 0.15.2
    beside it: planning that takes 15-40 s a machine today (issue 20, "every plan is bounded")."""
    root = tmp_path_factory.mktemp("machines")
    python = make_env(root / "env", {"vllm": "0.7.2"})
    facts = api.facts(api.FactsRequest(environment=api.Environment(python=python), settings=api.read_settings()))
    path = root / "facts.json"
    path.write_text(dump_facts(facts), encoding="utf-8")
    return path


@pytest.mark.parametrize("machine", list(MACHINES))
def test_doctor_never_ends_in_a_bug(installed: Path, machine: str) -> None:
    gpus, driver = MACHINES[machine]
    outcome = _outcome(lambda: api.doctor(api.DoctorRequest(
        environment=api.Environment(facts_file=installed), declared=api.Declared(gpus=gpus, driver=driver), find_config=False,
        settings=api.read_settings(),
    )))
    assert outcome in ("ok", "usage")


PLAN_BUGS: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "machine", [pytest.param(m, marks=[PLAN_BUGS[m]] if m in PLAN_BUGS else []) for m in MACHINES],
)
def test_plan_never_ends_in_a_bug(installed: Path, machine: str) -> None:
    gpus, driver = MACHINES[machine]
    outcome = _outcome(lambda: api.plan(api.PlanRequest(
        environment=api.Environment(facts_file=installed), declared=api.Declared(gpus=gpus, driver=driver), settings=api.read_settings(),
    )))
    assert outcome in ("ok", "conflict", "usage")
