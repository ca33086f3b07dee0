"""doctor, lock and plan name the same torch build and the same minimum driver for the same facts.

Each case is an installed torch on declared GPUs and a declared driver. doctor's fix command,
the build `compat lock` pins for that torch release and the torch step of `compat plan` must
install one build (version, local tag, index); where no build of the release runs, the minimum
driver doctor quotes must be the one lock's rule reports.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from compat.errors import ResolutionError
from compat.judge.checks import cuda
from compat.judge.diagnose import diagnose
from compat.judge.torch_build import Rejection, choose_torch_build, gpu_archs
from compat.matrix import Matrix, load_matrix
from compat.model.facts import Distribution, Facts
from compat.model.findings import Finding, Status
from compat.model.lock import Lock, StepKind
from compat.model.rejection import RejectionKind
from compat.report.lock import render_conflict
from compat.resolve import declared_target, resolve
from compat.resolve.plan import plan
from compat.sources.declared import Declared, apply_declared
from compat.sources.probe.torch import from_metadata

PYTHON = "3.11"
CU = "https://download.pytorch.org/whl/"


@dataclasses.dataclass(frozen=True)
class Case:
    torch: str
    gpus: str
    driver: str
    build: tuple[str, str | None, str | None] | None
    """(version, local tag, index) all three must install; None when no build of the release fits."""
    min_driver: str | None
    """The minimum driver doctor quotes (None: it quotes none)."""
    ids: frozenset[str]
    """doctor's findings about the torch build."""


CASES = {
    # The public index's cu124 build runs on R580 and has sm_90: doctor used to say cu126 from the PyTorch index.
    "cpu-2.6.0-8xH100-r580": Case("2.6.0+cpu", "8xH100", "580.95.05", ("2.6.0", None, None), None,
                                  frozenset({cuda.CPU_ONLY})),
    # No 2.5.1 build runs fully on R470 (cu118 needs 520.61.05): one number, lock's.
    "cu124-2.5.1-2xA100-r470": Case("2.5.1+cu124", "2xA100", "470.82.01", None, "520.61.05",
                                    frozenset({cuda.DRIVER_TOO_OLD})),
    # No 2.5.1 build has sm_120: no build to install, the fix is a newer release.
    "2.5.1-1xRTX5090-r580": Case("2.5.1", "1xRTX5090", "580.95.05", None, None, frozenset({cuda.NO_ARCH})),
    # cu130 (the public build of 2.13.0) drops Volta; the cu126 build still has sm_70.
    "2.13.0-1xV100-r580": Case("2.13.0", "1xV100", "580.95.05", ("2.13.0", "cu126", CU + "cu126"), None,
                               frozenset({cuda.NO_ARCH})),
    # R535 runs CUDA 12.6 only through minor-version compatibility; cu118 runs fully.
    "cu126-2.6.0-1xH100-r535": Case("2.6.0+cu126", "1xH100", "535.104.05", ("2.6.0", "cu118", CU + "cu118"),
                                    "560.28.03", frozenset({cuda.MINOR_COMPAT})),
    # Healthy: nothing to fix, and nothing for plan to move.
    "2.6.0-8xH100-r550": Case("2.6.0", "8xH100", "550.54.15", ("2.6.0", None, None), None, frozenset()),
}

_INSTALL = re.compile(r"^pip install 'torch==([^'+]+)(?:\+([^']+))?'(?: --index-url (\S+))?$")
_DRIVER = re.compile(r"(?:driver >= |oldest driver one runs on is )(\d+\.\d+(?:\.\d+)?)")


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix()


def _declared(case: Case) -> Declared:
    return Declared(gpus=case.gpus, driver=case.driver)


def _installed(case: Case, matrix: Matrix) -> Facts:
    target = declared_target(python_version=PYTHON)
    facts = dataclasses.replace(
        target,
        packages=(Distribution(name="torch", version=case.torch, requires=()),),
        torch=from_metadata(case.torch, matrix, import_error=None),
    )
    return apply_declared(facts, _declared(case), matrix)


def _target(case: Case, matrix: Matrix) -> Facts:
    return apply_declared(declared_target(python_version=PYTHON), _declared(case), matrix)


def _torch_findings(facts: Facts, matrix: Matrix) -> list[Finding]:
    return [f for f in diagnose(facts, matrix) if f.id in cuda.OWNS and f.status is Status.FOUND]


def _doctor_build(findings: list[Finding]) -> tuple[str, str | None, str | None] | None:
    installs = {c for f in findings for c in f.fix.commands if c.startswith("pip install")}
    assert len(installs) <= 1, installs  # every finding names the same build
    if not installs:
        return None
    match = _INSTALL.match(installs.pop())
    assert match, installs
    return match.group(1), match.group(2), match.group(3)


def _doctor_min_drivers(findings: list[Finding]) -> set[str]:
    texts = [t for f in findings for t in (f.title, f.cause, f.fix.advice, *(e.text for e in f.evidence))]
    return {m.group(1) for t in texts for m in _DRIVER.finditer(t)}


def _lock(case: Case, matrix: Matrix) -> Lock | ResolutionError:
    try:
        return resolve([f"torch=={case.torch.split('+')[0]}"], _target(case, matrix), matrix)
    except ResolutionError as exc:
        return exc


@pytest.mark.parametrize("name", sorted(CASES))
def test_doctor_lock_and_plan_install_the_same_torch_build(name, matrix):
    case = CASES[name]
    installed = _installed(case, matrix)
    findings = _torch_findings(installed, matrix)
    assert {f.id for f in findings} == case.ids
    assert len(findings) == len(case.ids)  # each problem once

    lock = _lock(case, matrix)
    if case.build is None:
        assert isinstance(lock, ResolutionError)
        assert _doctor_build(findings) is None
        return
    assert isinstance(lock, Lock), lock
    pin = lock.pin("torch")
    assert pin is not None
    locked = (pin.version, pin.local, pin.index_url)
    assert locked == case.build

    if case.ids:
        assert _doctor_build(findings) == locked
    steps = [s for s in plan(installed, lock).steps if s.kind is StepKind.TORCH]
    if not case.ids:
        assert steps == []  # the installed build is the locked one
        return
    (step,) = steps
    version, _, local = step.packages[0].removeprefix("torch==").partition("+")
    index = step.command[step.command.index("--index-url") + 1] if "--index-url" in step.command else None
    assert (version, local or None, index) == locked


@pytest.mark.parametrize("name", sorted(CASES))
def test_doctor_quotes_one_minimum_driver_and_it_is_the_chooser_s(name, matrix):
    case = CASES[name]
    findings = _torch_findings(_installed(case, matrix), matrix)
    quoted = _doctor_min_drivers(findings)
    assert quoted == ({case.min_driver} if case.min_driver else set())
    if case.build is None and case.min_driver is not None:
        # lock cannot resolve: its rule's rejection carries the number doctor quotes
        target = _target(case, matrix)
        gpus = gpu_archs(target.hardware.gpus)
        driver = target.hardware.driver
        rejection = choose_torch_build(matrix, case.torch.split("+")[0], gpus=gpus, driver=driver, python=PYTHON)
        assert isinstance(rejection, Rejection)
        assert rejection.min_driver == case.min_driver
        lock = _lock(case, matrix)
        assert isinstance(lock, ResolutionError)
        rejections = [r for c in lock.causes for r in c.rejections]
        assert [r.min_driver for r in rejections if r.kind is RejectionKind.NEEDS_DRIVER] == [case.min_driver]
        assert "newer driver" in render_conflict([case.torch], lock)


def test_plan_removes_a_cpu_build_before_installing_the_public_one(matrix):
    # `pip install torch==2.6.0` keeps 2.6.0+cpu (the version matches): it must go first, as doctor says.
    case = CASES["cpu-2.6.0-8xH100-r580"]
    installed = _installed(case, matrix)
    lock = _lock(case, matrix)
    assert isinstance(lock, Lock)
    steps = plan(installed, lock).steps
    assert [s.kind for s in steps][:2] == [StepKind.UNINSTALL, StepKind.TORCH]
    assert steps[0].packages == ("torch",)
    (finding,) = _torch_findings(installed, matrix)
    assert finding.fix.commands == ("pip uninstall -y torch", "pip install 'torch==2.6.0'")
