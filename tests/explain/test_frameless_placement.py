"""A device mismatch printed with no frame is the program's placement (issue 23, round 10): torch's check on the
tensors one operation was given. The lines come from threads fixed in their own code, none in a held-out corpus:
RonyAbecidan/ManTraNet-pytorch#2 ("adding cpu().detach() helped"), syuu1987/geekTime-semantic-segmentation#1 (a
BatchNorm built inside forward, left on the CPU), facebookresearch/detr#524 (its title; the same index_select
mismatch haoosz/ConceptExpress#5 fixed with ".to(latents.device)"), wmyw96/FAST-NN#1 (the model's own tensors)."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict


@pytest.mark.parametrize("line", [
    b"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
    b"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    b"(when checking argument for argument index in method wrapper__index_select)\n",
    b"`RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
    b"(when checking argument for argument mat2 in method wrapper_mm)`\n",
])
def test_a_frameless_device_mismatch_is_the_programs(catalog, line):
    (error,) = explain([line], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT, error.reasons
    assert "placement" in error.reasons[0]


def test_a_device_mismatch_raised_in_a_package_stays_a_suspect(catalog):
    # A library's frame placed the tensors (accelerate's hooks, a trainer's reference model): not the user's by default.
    log = (b"Traceback (most recent call last):\n"
           b'  File "/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py", line 120, in forward\n'
           b"    return self.weight * hidden_states.to(input_dtype)\n"
           b"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n")
    (error,) = explain([log], catalog).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT, error.reasons


def test_another_frameless_runtime_error_still_decides_nothing(catalog):
    (error,) = explain([b"RuntimeError: CUDA error: misaligned address\n"], catalog).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT
