"""Golden files for every renderer: each output byte for fixed inputs (fixed width, no colour, no clock).

Regenerate with `COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/golden --no-cov` and review the diff. The lock and
plan renderers have their own table of golden cases in tests/resolve.
"""

from __future__ import annotations

import dataclasses

import pytest

from compat.explain.match import explain
from compat.explain.scan import Engine
from compat.matrix import Matrix, load_matrix
from compat.matrix._toml import read_toml
from compat.matrix.releases import parse_releases_file
from compat.matrix.signatures import load_signatures
from compat.model.facts import dump_facts, load_facts
from compat.model.findings import sort_findings
from compat.report import doctor as doctor_report
from compat.report import explain as explain_report
from tests.golden.inputs import findings, h100_box, unknown_box
from tests.support.golden import check_golden
from tests.support.paths import GOLDEN

FACTS = {"h100": h100_box, "unknown": unknown_box}

LOG = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so", line 1, in <module>
[rank0]: ImportError: /opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi
[rank1]: ImportError: /opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi
[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    signatures = load_signatures([(read_toml(GOLDEN / "signatures.toml", label="signatures.toml"), "golden")])
    return dataclasses.replace(load_matrix(), signatures=signatures)


@pytest.mark.parametrize("box", sorted(FACTS))
def test_facts_json(box):
    text = dump_facts(FACTS[box]())
    check_golden(GOLDEN / f"facts-{box}.json.txt", text)
    assert load_facts(text) == FACTS[box](), "the snapshot must read back as the same facts"


@pytest.mark.parametrize("box", sorted(FACTS))
def test_doctor_text(box):
    text = doctor_report.render_text(FACTS[box](), sort_findings(findings()), color=False, width=100)
    check_golden(GOLDEN / f"doctor-{box}.txt", text)


def test_doctor_text_without_findings():
    check_golden(GOLDEN / "doctor-h100-clean.txt", doctor_report.render_text(h100_box(), (), color=False, width=100))


@pytest.mark.parametrize("box", sorted(FACTS))
def test_doctor_json(box):
    check_golden(GOLDEN / f"doctor-{box}.json.txt", doctor_report.render_json(FACTS[box](), sort_findings(findings())))


@pytest.mark.parametrize("facts", [None, "h100"])
def test_explain(matrix, facts):
    # The pure-Python engine is everywhere: the golden JSON does not depend on an optional wheel.
    explanation = explain(LOG.splitlines(keepends=True), matrix, FACTS[facts]() if facts else None, engine=Engine.PYTHON)
    name = f"explain-{facts or 'nofacts'}"
    check_golden(GOLDEN / f"{name}.txt", explain_report.render_text(explanation))
    check_golden(GOLDEN / f"{name}.json.txt", explain_report.render_json(explanation))
    check_golden(GOLDEN / f"{name}-top1.txt", explain_report.render_text(explanation, top=1))


def test_explain_unknown_log(matrix):
    explanation = explain(["all good\n", "step 10 loss 0.1\n"], matrix, None, engine=Engine.PYTHON)
    check_golden(GOLDEN / "explain-none.txt", explain_report.render_text(explanation))
    check_golden(GOLDEN / "explain-none.json.txt", explain_report.render_json(explanation))


def test_matrix_show(monkeypatch):
    from compat.report.matrix import render_releases_json, render_releases_table

    package = parse_releases_file(read_toml(GOLDEN / "releases-vllm.toml", label="releases-vllm.toml"), expected="vllm")
    check_golden(GOLDEN / "matrix-show-vllm.txt", render_releases_table(package))
    check_golden(GOLDEN / "matrix-show-vllm-since.txt", render_releases_table(package, since="0.7.0"))
    check_golden(GOLDEN / "matrix-show-vllm.json.txt", render_releases_json(package))
