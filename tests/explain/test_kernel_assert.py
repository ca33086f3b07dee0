"""A CUDA device-side assert no catalog entry explains is the program's data (issue 23), not the environment.

The lines are the echo entry's saved lines (tests/data/logs/cuda-device-side-assert-echo.log: huggingface/trl#2883,
vllm-project/vllm#11931, QwenLM/Qwen3#368 and the other threads cuda-device-side-assert-echo cites), whose threads
fixed labels and token ids; the torch frames are the ones divelab/DIG#224 and microsoft/SimXNS#2 print."""
from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict

TORCH_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/miniconda3/envs/x/lib/python3.10/site-packages/torch/cuda/__init__.py", line 314, in set_device\n'
    "    torch._C._cuda_setDevice(device)\n"
)


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: device-side assert triggered",
    "AcceleratorError: CUDA error: device-side assert triggered",
    "RuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THC/generic/THCTensorMath.cu:26",
])
def test_a_lone_kernel_assert_is_the_programs_data(catalog, line):
    for text in (line, TORCH_FRAMES + line):
        result = explain([text.encode()], catalog)
        assert result.verdict is ErrorVerdict.NOT_ENVIRONMENT, text


def test_an_environment_entry_above_the_assert_still_decides(catalog):
    text = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
            "RuntimeError: CUDA error: device-side assert triggered\n")
    result = explain([text.encode()], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert "gpu-arch-not-in-torch-build" in [m.signature.id for m in result.matches]

