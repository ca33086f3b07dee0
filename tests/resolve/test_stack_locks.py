"""Every stack of matrix/stacks.toml locks: its pins as targets, `exclude_newer` its date, on the hardware the
precision corpus declares (tests/data/precision/record.py), give a set.

A stack whose pins contradict what its own releases declare cannot be reproduced by any lock (pip and uv refuse
the same set; the project got it with an override, a later `pip install` over the top, or a pin read from
another platform's fork of a uv.lock): it is listed in CONTRADICTED with the requirement it breaks, and xfails
strictly, so a stack that starts to lock is noticed.
"""

from __future__ import annotations

from functools import cache

import pytest

from compat.errors import ResolutionError
from compat.matrix import load_matrix
from compat.resolve import resolve
from tests.support.facts import make_facts

pytestmark = pytest.mark.slow  # one lock per stack: minutes in all

PYTHONS = ("3.11", "3.10")  # as record.py: 3.10 where the stack's releases predate 3.11 wheels

CONTRADICTED = {
    "prime-rl-2025-05-06": "torch 2.6.0 requires triton==3.2.0 on Linux x86_64; the stack pins triton==3.1.0",
    "skyrl-2025-05-07": "torch 2.6.0 requires triton==3.2.0 on Linux x86_64; the stack pins triton==3.1.0",
    "open-instruct-2025-06-03": "torch 2.6.0 requires triton==3.2.0 on Linux x86_64; the stack pins triton==3.1.0",
    "prime-rl-2025-06-19": "torch 2.7.0 requires triton==3.3.0 on Linux x86_64; the stack pins triton==3.2.0",
    "open-instruct-2025-07-10": "torch 2.7.0 requires triton==3.3.0 on Linux x86_64; the stack pins triton==3.2.0",
    "axolotl-2025-06-05": "vllm 0.8.5.post1 requires xformers==0.0.29.post2; the stack pins xformers==0.0.29.post3",
    "axolotl-2025-08-05": "vllm 0.10.0 requires xformers==0.0.31 (and torch==2.7.1); the stack pins xformers==0.0.30 (torch==2.7.0)",
    "axolotl-2025-10-08": "vllm 0.10.0 requires xformers==0.0.31 (and torch==2.7.1); the stack pins xformers==0.0.30 (torch==2.7.0)",
    "axolotl-2026-01-21": "vllm 0.11.1 requires xformers==0.0.33.post1; the stack pins xformers==0.0.30",
    "verl-image-stable-vllm": "vllm 0.12.0 requires torch==2.9.0; the image installs torch==2.9.1 over it",
    "openrlhf-2026-04-15": "vllm 0.19.0 requires transformers<5,>=4.56.0; the stack pins transformers==5.5.4",
    "openrlhf-2026-03-16": "vllm 0.17.1 requires transformers<5,>=4.56.0; the stack pins transformers==5.3.0",
    "openrlhf-2026-04-04": "vllm 0.19.0 requires transformers<5,>=4.56.0; the stack pins transformers==5.5.0",
    "oat-2025-04-18": "vllm 0.8.4 requires transformers>=4.51.1; the stack pins transformers==4.51.0",
    "roll-torch2100-vllm-2026-03-09": (
        "trl 0.9.6 (requirements_common.txt, shared by every image) imports MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES in"
        " trl/trainer/dpo_trainer.py, which transformers 5.2.0 removed: a lock keeps off that broken link"),
}


@cache
def _matrix():
    return load_matrix()


def _stacks():
    return [
        pytest.param(s, id=s.id, marks=pytest.mark.xfail(strict=True, raises=ResolutionError, reason=CONTRADICTED[s.id]))
        if s.id in CONTRADICTED else pytest.param(s, id=s.id)
        for s in _matrix().stacks.stacks
    ]


@pytest.mark.parametrize("stack", _stacks())
def test_a_stack_locks_as_of_its_date(stack):
    targets = [f"{name}=={version}" for name, version in stack.pins]
    error: ResolutionError | None = None
    for python in PYTHONS:
        try:
            lock = resolve(targets, make_facts(gpus=8, cc="9.0", driver="580.95.05", python=python), _matrix(),
                           exclude_newer=stack.date)
        except ResolutionError as exc:
            error = error or exc
            continue
        pinned = {p.name: p.version for p in lock.pins}
        assert all(pinned[name] == str(version) for name, version in stack.pins)
        return
    assert error is not None
    raise error


def test_every_contradiction_names_a_stack():
    assert set(CONTRADICTED) <= {s.id for s in _matrix().stacks.stacks}
