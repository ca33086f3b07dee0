"""Every phrasing of the stated-version reader on a real line from a public thread.

Each row: the phrasing's id, the line as the thread shows it (wrapping kept), the thread, and what
must be read from it: (subject, wanted, found, by). `SECOND_LINES` are other threads' lines for the
same phrasings, kept out of the table while the patterns were written and scored at the end.
"""

from __future__ import annotations

import dataclasses

import pytest

from compat.explain.versions import PHRASINGS, Change, StatedVersion, check, stated_versions
from tests.explain.test_roots import _facts

Row = tuple[str, str, str, tuple[str, str, str | None, str | None]]

LINES: list[Row] = [
    ("symbol-version-not-found",
     "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
     "/usr/local/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so)",
     "https://github.com/Dao-AILab/flash-attention/issues/1762", ("glibc", ">=2.32", None, "flash_attn_2_cuda")),
    ("numpy-abi",
     "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.3.4 as it may crash. To support both 1.x and 2.x versions",
     "https://github.com/deepbeepmeep/Wan2GP/issues/1044", ("numpy", "==1.*", "2.3.4", None)),
    ("require-version",
     "ImportError: huggingface-hub>=0.19.3,<1.0 is required for a normal functioning of this module, but found huggingface-hub==0.17.1",
     "https://github.com/huggingface/huggingface_hub/issues/2377", ("huggingface-hub", ">=0.19.3,<1.0", "0.17.1", None)),
    ("pip-requires-but-you-have",
     "vllm-flash-attn 2.5.8.post2 requires torch==2.3.0, but you have torch 2.0.1 which is incompatible.",
     "https://github.com/allenai/open-instruct/issues/172", ("torch", "==2.3.0", "2.0.1", "vllm-flash-attn")),
    ("requires-but-found",
     "RuntimeError: flash-attn requires torch>=2.4 but found 2.3.1",
     "tests/fault/test_long_lines.py (the reader's own long-line case)", ("torch", ">=2.4", "2.3.1", None)),
    ("two-cuda-builds",
     "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA "
     "Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the torchvision that matches your PyTorch install.",
     "https://github.com/deforum/deforum-stable-diffusion/issues/348", ("cuda", "==12.1", "11.8", "torchvision")),
    ("ray-version-mismatch",
     "RuntimeError: Version mismatch: The cluster was started with:\n    Ray: 2.12.0\n    Python: 3.11.11\n"
     "This process on node 10.123.3.87 was started with:\n    Ray: 2.42.0\n    Python: 3.9.21",
     "https://github.com/Unakar/Logic-RL/issues/30", ("ray", "==2.12.0", "2.42.0", None)),
    ("driver-too-old",
     "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading "
     "and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
     "https://github.com/lllyasviel/Fooocus/issues/1313", ("nvidia-driver", "", "11.4", None)),
    ("built-for",
     "RuntimeError: xformers was built for PyTorch 2.4.0+cu121 with CUDA 1201 (you have 2.5.1+cu124)",
     "tests/explain/test_roots.py (the reader's first wording)", ("torch", "==2.4.0+cu121", "2.5.1+cu124", None)),
    ("extension-cuda-mismatch",
     "RuntimeError:\n      The detected CUDA version (11.8) mismatches the version that was used to compile\n"
     "      PyTorch (12.4). Please make sure to use the same CUDA versions.",
     "https://github.com/icip-cas/AutoAlign/issues/25", ("cuda-toolkit", "==12.4.*", "11.8", "torch")),
    ("deepspeed-ops-built-for",
     "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version than what is "
     "being used at runtime.\nPlease re-install DeepSpeed or switch torch versions. Install torch version=2.1, Runtime torch "
     "version=2.2",
     "https://github.com/erew123/alltalk_tts/issues/111", ("torch", "==2.1.*", "2.2", "deepspeed")),
    ("installed-cuda-does-not-match",
     "Exception: Installed CUDA version 12.3 does not match the version torch was compiled with 12.1, unable to compile cuda/cpp "
     "extensions without a matching cuda version.",
     "https://github.com/bytedance/lightseq/issues/526", ("cuda-toolkit", "==12.1.*", "12.3", "torch")),
    ("binaries-compiled-with-cuda",
     "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile "
     "Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.1.",
     "https://github.com/NVIDIA/apex/pull/323", ("cuda-toolkit", "==10.1.*", None, "torch")),
    ("arch-not-in-build",
     "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
     "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
     "https://github.com/Hellod035/LeggedLab/issues/26", ("compute-capability", "", "12.0", "torch")),
    ("gpu-too-old-for-torch",
     "Found GPU0 GeForce GT 720 which is of cuda capability 3.5.\nPyTorch no longer supports this GPU because it is too old.\n"
     "The minimum cuda capability supported by this library is 3.7.",
     "https://github.com/w-okada/voice-changer/issues/447", ("compute-capability", ">=3.7", "3.5", "torch")),
    ("cudnn-compiled-against",
     "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime version (8, 3, 3). "
     "PyTorch already comes bundled with cuDNN.",
     "https://github.com/RaleLee/Co-GAT/issues/2", ("cudnn", "==8.5.0", "8.3.3", "torch")),
    ("cudnn-compiled-against-number",
     "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600",
     "https://github.com/jwyang/faster-rcnn.pytorch/issues/662", ("cudnn", "==7.1.2", "7.6.0", "torch")),
    ("triton-capability",
     "RuntimeError: Found NVIDIA GeForce GTX 1070 which is too old to be supported by the triton GPU compiler, which is used as the "
     "backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     "https://github.com/apple/ml-cross-entropy/issues/41", ("compute-capability", ">=7.0", "6.1", "triton")),
    ("capability-at-least",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute "
     "capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.",
     "https://github.com/substratusai/vllm-docker/issues/37", ("compute-capability", ">=8.0", "7.5", None)),
    ("capability-below-unsupported",
     "RuntimeError: GPUs with compute capability below 7.0 are not supported.",
     "https://github.com/vllm-project/vllm/issues/1284", ("compute-capability", ">=7.0", None, None)),
    ("xformers-built-for",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cu118)\n    Python  3.8.18 (you have 3.8.5)",
     "https://github.com/facebookresearch/xformers/issues/800", ("torch", "==2.1.0+cu121", "2.1.0+cu118", "xformers")),
    ("greater-or-equal-detected",
     "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: you need flash_attn "
     "package version to be greater or equal than 2.1.0. Detected version 2.0.4.",
     "https://github.com/hiyouga/LlamaFactory/issues/3464", ("flash-attn", ">=2.1.0", "2.0.4", None)),
    ("requires-version-but-got",
     "Requires Flash-attention version >=2.7.1,<=2.7.4 but got 2.8.3",
     "https://github.com/Tongyi-MAI/Z-Image/issues/128", ("flash-attn", ">=2.7.1,<=2.7.4", "2.8.3", None)),
    ("requires-different-python",
     "ERROR: Package 'click' requires a different Python: 3.9.19 not in '>=3.10'",
     "https://github.com/AkaliKong/MiniOneRec/issues/5", ("python", ">=3.10", "3.9.19", "click")),
    ("ignored-requires-python",
     "ERROR: Ignored the following versions that require a different python version: 8.2.0 Requires-Python >=3.10; "
     "8.2.1 Requires-Python >=3.10",
     "https://github.com/macadmins/python/issues/68", ("python", ">=3.10", None, None)),
    ("pkg-resources-conflict",
     "pkg_resources.ContextualVersionConflict: (torch 1.7.1 (/usr/local/lib/python3.6/dist-packages), "
     "Requirement.parse('torch==1.7.0'), {'torchvision'})",
     "https://github.com/EleutherAI/gpt-neox/issues/116", ("torch", "==1.7.0", "1.7.1", "torchvision")),
    ("depends-on",
     "The conflict is caused by:\n    The user requested torch==2.2.0\n    xformers 0.0.21 depends on torch==2.0.1",
     "https://github.com/omer11a/bounded-attention/issues/6", ("torch", "==2.0.1", None, "xformers")),
    ("because-depends-on",
     "  ╰─▶ Because vllm>=0.5.4,<=0.6.3.post1 depends on torch==2.4.0 and torch==2.3.1, we can conclude that",
     "https://github.com/hiyouga/LlamaFactory/issues/8309", ("torch", "==2.4.0", None, "vllm")),
    ("ptx-isa-unsupported",
     "ptxas C:\\Users\\ai\\AppData\\Local\\Temp\\tmpkoko0xtp.ptx, line 5; fatal   : Unsupported .version 8.8; current version is '8.7'",
     "https://github.com/QwenLM/Qwen2.5-Omni/issues/247", ("ptx-isa", ">=8.8", "8.7", "ptxas")),
    ("untested-version",
     " [WARNING]  using untested triton version (2.0.0), only 1.0.0 is known to be compatible",
     "https://github.com/deepspeedai/DeepSpeed/issues/3480", ("triton", "==1.0.0", "2.0.0", None)),
    ("requires-quoted-requirement",
     "ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please run `pip install transformers[torch]` "
     "or `pip install accelerate -U`",
     "https://github.com/huggingface/course/issues/644", ("accelerate", ">=0.20.1", None, None)),
    ("versioned-library-missing",
     "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
     "https://github.com/vllm-project/vllm/issues/31018", ("cuda", "==12.*", None, None)),
    ("compiler-above-cuda-maximum",
     "RuntimeError: The current installed version of g++ (12.2.1) is greater than the maximum required version by CUDA 11.7 "
     "(11.5.0). Please make sure to use an adequate version of g++ (>=6.0.0, <=11.5.0).",
     "https://github.com/qwopqwop200/GPTQ-for-LLaMa/issues/33", ("gcc", ">=6.0.0,<=11.5.0", "12.2.1", "cuda 11.7")),
    ("unsupported-gnu-version",
     "/usr/local/cuda-9.0/include/crt/host_config.h:119:2: error: #error -- unsupported GNU version! gcc versions later than 6 "
     "are not supported!",
     "https://github.com/adujardin/zed-openpose/issues/6", ("gcc", "<7", None, "cuda-toolkit")),
    ("only-on-cuda-and-above",
     "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by "
     "running nvcc -V.",
     "https://github.com/Dao-AILab/flash-attention/issues/825", ("cuda-toolkit", ">=11.6", None, None)),
    ("python-not-yet-supported",
     "RuntimeError: Python 3.11+ not yet supported for torch.compile",
     "https://github.com/pytorch/pytorch/issues/104918", ("python", "<3.11", None, "torch")),
    ("not-supported-on-python",
     "RuntimeError: Dynamo is not supported on Python 3.12+",
     "https://github.com/pytorch/pytorch/issues/120233", ("python", "<3.12", None, "torch")),
    ("downgrade-to-series",
     "If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with protoc >= 3.19.0.\n"
     "If you cannot immediately regenerate your protos, some other possible workarounds are:\n"
     " 1. Downgrade the protobuf package to 3.20.x or lower.",
     "https://github.com/darkosancanin/apple_bssid_locator/pull/4", ("protobuf", "<3.21", None, None)),
    ("required-for-this-version-of",
     "UserWarning: A NumPy version >=1.22.4 and <2.3.0 is required for this version of SciPy (detected version 2.3.4)",
     "https://github.com/deepbeepmeep/Wan2GP/issues/1044", ("numpy", ">=1.22.4,<2.3.0", "2.3.4", "scipy")),
    ("no-version-satisfies",
     "ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu118 (from versions: 1.11.0, 1.12.0, 2.7.1)\n"
     "ERROR: No matching distribution found for torch==2.0.1+cu118",
     "https://github.com/harlanhong/ACTalker/issues/10", ("torch", "==2.0.1+cu118", None, None)),
    ("version-greater-than",
     "ValueError: The version of PEFT you are using is not compatible, please use a version that is greater than 0.5.0",
     "https://github.com/AGI-Edgerunners/LLM-Adapters/issues/47", ("peft", ">0.5.0", None, None)),
    ("or-higher-but-got",
     "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8",
     "https://github.com/woct0rdho/triton-windows/issues/49", ("cuda", ">=10.0", "12.8", None)),
    ("requires-to-function-but-found",
     "ImportError: `diffusers` requires transformers >= 4.25.1 to function correctly, but 4.21.0 was found in your environment. "
     "You can upgrade it with pip: `pip install transformers --upgrade`",
     "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/5539", ("transformers", ">=4.25.1", "4.21.0", None)),
    ("distribution-not-found-required-by",
     "pkg_resources.DistributionNotFound: The 'transformers<4.45,>=4.33' distribution was not found and is required by ms-swift",
     "https://github.com/QwenLM/Qwen3-VL/issues/84", ("transformers", "<4.45,>=4.33", None, "ms-swift")),
    ("please-install-requirement",
     "{\"message\": \"Please install bitsandbytes>=0.45.0 via `pip install bitsandbytes>=0.45.0` to use bitsandbytes quantizer.\", "
     "\"exc_info\": \"Traceback (most recent call last):",
     "https://github.com/gpustack/gpustack/issues/1079", ("bitsandbytes", ">=0.45.0", None, None)),
    # with the found side that may follow: torchao 0.17's warning at import, as sglang's documentation notebooks print it
    ("please-install-requirement",
     "Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0 (found 2.9.1+cu130).",
     "https://github.com/pytorch/ao/blob/main/torchao/__init__.py", ("torch", ">=2.11.0", "2.9.1+cu130", None)),
    ("requirement-not-available",
     "ImportError: You have set `use_liger_kernel` to `True` but liger-kernel >= 0.3.0 is not available. Please install it with "
     "`pip install liger-kernel`",
     "https://github.com/huggingface/trl/issues/2997", ("liger-kernel", ">=0.3.0", None, None)),
    # sglang's assert_pkg_version, in its two wordings (the package missing or registered under another name; too old).
    ("minimum-required-not-installed",
     "Exception: flashinfer_python with minimum required version 0.2.5 is not installed. Please uninstall the old version and "
     "reinstall the latest version by following the instructions at https://docs.flashinfer.ai/installation.html.",
     "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/utils.py", ("flashinfer-python", ">=0.2.5", None, None)),
    ("installed-less-than-minimum",
     "Exception: sgl-kernel is installed with version 0.0.9.post2, which is less than the minimum required version 0.1.1. Please "
     "reinstall the latest version with `pip install sgl-kernel --force-reinstall`",
     "https://github.com/verl-project/verl/pull/1832", ("sgl-kernel", ">=0.1.1", "0.0.9.post2", None)),
    # The general wordings (`general=True`): a bound after "requires", before "is required", a version "or higher".
    ("requires-bound",
     "ValueError: FSDP requires PyTorch >= 2.1.0",
     "https://github.com/lm-sys/FastChat/issues/2809", ("torch", ">=2.1.0", None, None)),
    ("bound-is-required",
     "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1",
     "https://github.com/jingyaogong/minimind/issues/588", ("torch", ">=2.1", "2.0.1", None)),
    ("or-higher-is-required",
     "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n  CMake 3.20 or higher is required.  You are running version 3.19.7",
     "https://github.com/scivision/mumps-superbuild/issues/20", ("cmake", ">=3.20", "3.19.7", None)),
    ("minimum-version-is",
     "ERROR: This script does not work on Python 3.7 The minimum supported Python version is 3.8. Please use "
     "https://bootstrap.pypa.io/pip/3.7/get-pip.py instead.",
     "https://github.com/pypa/get-pip/issues/214", ("python", ">=3.8", None, None)),
    ("cannot-install-on-python",
     "RuntimeError: Cannot install on Python version 3.13.0; only versions >=3.9,<3.13 are supported.",
     "https://github.com/Philipbear/msbuddy/issues/5", ("python", ">=3.9,<3.13", "3.13.0", None)),
    # unsloth raises it from its loader when the installed transformers predates the model.
    ("works-on-bound",
     "RuntimeError: Unsloth: Gemma 3N only works on transformers >= 4.53.0",
     "https://github.com/unslothai/unsloth/blob/main/unsloth/models/loader.py", ("transformers", ">=4.53.0", None, None)),
    ("your-version-does-not-support",
     "Unsloth: Your transformers version of 4.57.6 does not support Qwen3.5. The minimum required version is 5.2.0. Try "
     "`pip install --upgrade \"transformers>=5.2.0\"` to obtain the latest transformers build, then restart this session.",
     "https://github.com/unslothai/unsloth/issues/5758", ("transformers", ">=5.2.0", "4.57.6", None)),
    # unsloth's loader raises it, in two places, for a model whose architecture the installed transformers lacks.
    ("not-supported-yet-in",
     "ValueError: `Qwen/Qwen3-Next-80B-A3B-Instruct` is not supported yet in `transformers==4.56.2`.\nPlease update "
     "transformers via `pip install --upgrade transformers` and try again.",
     "https://github.com/unslothai/unsloth/blob/main/unsloth/models/loader.py", ("transformers", ">4.56.2", "4.56.2", None)),
]

SECOND_LINES: list[Row] = [
    # Held out while the patterns were written (other threads, other releases' wordings); scored at the end.
    ("please-install-requirement",
     "ImportError: Please install bitsandbytes>=0.42.0 via pip install bitsandbytes>=0.42.0 to use bitsandbytes quantizer.",
     "https://github.com/vllm-project/vllm/pull/6525", ("bitsandbytes", ">=0.42.0", None, None)),
    ("distribution-not-found-required-by",
     "pkg_resources.DistributionNotFound: The 'torch<1.7.0' distribution was not found and is required by pykg2vec",
     "https://github.com/Sujit-O/pykg2vec/issues/228", ("torch", "<1.7.0", None, "pykg2vec")),
    ("symbol-version-not-found",
     "/home/nsage/anaconda3/envs/cc3d-compile/lib/python3.12/site-packages/cc3d/cpp/_CompuCell.so: /usr/lib/x86_64-linux-gnu/"
     "libstdc++.so.6: version `CXXABI_1.3.15' not found (required by /home/nsage/anaconda3/envs/cc3d-compile/lib/python3.12/"
     "site-packages/cc3d/cpp/_CompuCell.so)",
     "https://github.com/CompuCell3D/CompuCell3D/issues/830", ("cxxabi", ">=1.3.15", None, "cc3d")),
    ("numpy-abi",
     "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.2 as it may crash. To support both 1.x and 2.x",
     "https://github.com/TheIndependentCode/Neural-Network/issues/6", ("numpy", "==1.*", "2.0.2", None)),
    ("require-version",
     "ImportError: peft>=0.15.0 is required for a normal functioning of this module, but found peft==0.14.0.",
     "https://github.com/deepbeepmeep/Wan2GP/issues/421", ("peft", ">=0.15.0", "0.14.0", None)),
    ("pip-requires-but-you-have",
     "outlines 0.0.34 requires pydantic>=2.0, but you have pydantic 1.10.15 which is incompatible.",
     "https://github.com/allenai/open-instruct/issues/172", ("pydantic", ">=2.0", "1.10.15", "outlines")),
    ("two-cuda-builds",
     "RuntimeError: Detected that PyTorch and torchvision were compiled with different\nCUDA versions. PyTorch has CUDA Version=11.7 "
     "and torchvision has CUDA \nVersion=11.8. Please reinstall the torchvision that matches your PyTorch \ninstall.",
     "https://github.com/geocine/sd-easy-mode/issues/18", ("cuda", "==11.7", "11.8", "torchvision")),
    ("ray-version-mismatch",
     "RuntimeError: Version mismatch: The cluster was started with:\n    Ray: 2.2.0\n    Python: 3.8.10\n"
     "This process on node 10.2.1.4 was started with:\n    Ray: 2.3.0\n    Python: 3.8.5",
     "https://github.com/microsoft/ray-on-aml/issues/32", ("ray", "==2.2.0", "2.3.0", None)),
    ("driver-too-old",
     "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000). Please update your GPU "
     "driver by downloading and installing a new version",
     "https://github.com/IEIT-Yuan/Yuan-2.0/issues/65", ("nvidia-driver", "", "11.0", None)),
    ("driver-too-old",
     "error info: NVIDIA driver on your system is too old (found version 6000)....",
     "https://github.com/pytorch/pytorch/issues/920", ("nvidia-driver", "", "6.0", None)),
    ("extension-cuda-mismatch",
     "RuntimeError:\n    The detected CUDA version (12.2) mismatches the version that was used to compile\n    PyTorch (11.3). "
     "Please make sure to use the same CUDA versions.",
     "https://github.com/PKUHaoWang/EmbodiedOcc2/issues/6", ("cuda-toolkit", "==11.3.*", "12.2", "torch")),
    ("installed-cuda-does-not-match",
     "Exception: Installed CUDA version 9.0 does not match the version torch was compiled with 10.1, unable to compile cuda/cpp "
     "extensions without a matching cuda version.",
     "https://github.com/bytedance/lightseq/issues/158", ("cuda-toolkit", "==10.1.*", "9.0", "torch")),
    ("arch-not-in-build",
     "UserWarning:\nNVIDIA GeForce RTX 5080 Laptop GPU with CUDA capability sm_120 is not compatible with the current PyTorch "
     "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.",
     "https://github.com/RetroUpgrade-YouTube/Hi3DGen_1Click_installer/issues/5", ("compute-capability", "", "12.0", "torch")),
    ("gpu-too-old-for-torch",
     "Found GPU0 NVIDIA GTX TITAN Black which is of cuda capability 3.5. PyTorch no longer supports this GPU because it is too old. "
     "The minimum cuda capability supported by this library is 3.7.",
     "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/3003", ("compute-capability", ">=3.7", "3.5", "torch")),
    ("cudnn-compiled-against",
     "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)",
     "https://github.com/pytorch/functorch/issues/926", ("cudnn", "==8.3.2", "8.0.3", "torch")),
    ("cudnn-compiled-against-number",
     "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against 7401 but linked against 7301",
     "https://github.com/akanimax/T2F/issues/6", ("cudnn", "==7.4.1", "7.3.1", "torch")),
    ("triton-capability",
     "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is used as the "
     "backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.0.",
     "https://github.com/uabrc/uabrc.github.io/issues/864", ("compute-capability", ">=7.0", "6.0", "triton")),
    ("capability-at-least",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has "
     "compute capability 7.0.",
     "https://github.com/vllm-project/vllm/issues/946", ("compute-capability", ">=8.0", "7.0", None)),
    ("xformers-built-for",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)",
     "https://github.com/facebookresearch/xformers/issues/982", ("torch", "==2.2.0+cu121", "2.2.0+cpu", "xformers")),
    ("requires-different-python",
     "ERROR: Package 'hallo' requires a different Python: 3.9.5 not in '<4.0,>=3.10'",
     "https://github.com/fudan-generative-vision/hallo/issues/122", ("python", "<4.0,>=3.10", "3.9.5", "hallo")),
    ("depends-on",
     "The conflict is caused by:\n    The user requested torch==1.7.1\n    auto-lirpa 0.2 depends on torch<1.9.0 and >=1.8.0",
     "https://github.com/AlvinWen428/FeatureCP/issues/2", ("torch", "<1.9.0", None, "auto-lirpa")),
    ("versioned-library-missing",
     "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or director",
     "https://github.com/vllm-project/vllm/issues/3387", ("cuda", "==11.*", None, None)),
    ("compiler-above-cuda-maximum",
     "RuntimeError: The current installed version of x86_64-linux-gnu-g++ (11.3.0) is greater than the maximum required version by "
     "CUDA 11.3 (10.0.0). Please make sure to use an adequate version of x86_64-linux-gnu-g++ (>=5.0.0, <=10.0.0).",
     "https://github.com/mit-han-lab/torchsparse/issues/189", ("gcc", ">=5.0.0,<=10.0.0", "11.3.0", "cuda 11.3")),
    ("only-on-cuda-and-above",
     "RuntimeError: FlashAttention is only supported on CUDA 11 and above",
     "https://github.com/lm-sys/FastChat/issues/1070", ("cuda-toolkit", ">=11", None, None)),
    ("required-for-this-version-of",
     "UserWarning: A NumPy version >=1.16.5 and <1.23.0 is required for this version of SciPy (detected version 1.23.1",
     "https://github.com/AnacondaRecipes/repodata-hotfixes/pull/166", ("numpy", ">=1.16.5,<1.23.0", "1.23.1", "scipy")),
    ("no-version-satisfies",
     "ERROR: Could not find a version that satisfies the requirement torch==1.8.2+cu111 (from versions: 2.0.0, 2.0.1, 2.1.0)",
     "https://github.com/kojima-takeshi188/zero_shot_cot/issues/6", ("torch", "==1.8.2+cu111", None, None)),
    ("not-supported-on-python",
     "RuntimeError: torch.compile is not supported on Python 3.14+",
     "https://github.com/PINA-org/PINA/issues/683", ("python", "<3.14", None, "torch")),
    # The general wordings: other threads, other packages, with and without spaces around the operator.
    ("requires-bound",
     "ValueError: 4 bit quantization requires bitsandbytes>=0.39.0 - please upgrade your bitsandbytes version",
     "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/815", ("bitsandbytes", ">=0.39.0", None, None)),
    ("requires-bound",
     "    assert torch_ver >= [1, 3], \"Requires PyTorch >= 1.3\"\nAssertionError: Requires PyTorch >= 1.3",
     "https://github.com/Megvii-BaseDetection/BorderDet/issues/40", ("torch", ">=1.3", None, None)),
    ("requires-bound",
     "Assert Trigger with Torch 2.0 (AssertionError: AdversarialPatchPyTorch requires torch>=1.7.0)",
     "https://github.com/Trusted-AI/adversarial-robustness-toolbox/issues/2179", ("torch", ">=1.7.0", None, None)),
    ("requires-bound",
     "I get the error `FSDP requires PyTorch >= 1.12.0`.",
     "https://github.com/HKUNLP/icl-ceil/issues/1", ("torch", ">=1.12.0", None, None)),
    ("bound-is-required",
     "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1",
     "https://github.com/XiaoxinHe/G-Retriever/issues/48", ("torch", ">=2.1", "2.0.1", None)),
    ("bound-is-required",
     "    author_email=\"hello@rwightman.com\",\nRuntimeError: Python version >= 3.9 required.",
     "https://github.com/opendilab/LMDrive/issues/8", ("python", ">=3.9", None, None)),
    ("bound-is-required",
     "You are using torch==1.13.0, but torch>=1.9.0 is required to use MCTCTModel. Please upgrade torch.",
     "https://github.com/huggingface/transformers/issues/21031", ("torch", ">=1.9.0", None, None)),
    ("or-higher-is-required",
     "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n  CMake 3.15 or higher is required.  You are running version 3.10.2",
     "https://github.com/InfiniTimeOrg/InfiniTime/issues/15", ("cmake", ">=3.15", "3.10.2", None)),
    ("or-higher-is-required",
     "  CMake 3.18 or higher is required.  You are running version 3.16.3",
     "https://github.com/hoehermann/purple-gowhatsapp/issues/201", ("cmake", ">=3.18", "3.16.3", None)),
    ("minimum-version-is",
     "ERROR: This script does not work on Python 3.6 The minimum supported Python version is 3.7. Please use "
     "https://bootstrap.pypa.io/pip/3.6/get-pip.py instead.",
     "https://github.com/exasol/script-languages-release/issues/474", ("python", ">=3.7", None, None)),
    ("minimum-version-is",
     "ERROR: This script does not work on Python 3.8. The minimum supported Python version is 3.9. Please use "
     "https://bootstrap.pypa.io/pip/3.8/get-pip.py instead.",
     "https://github.com/google/dataflow-ml-starter/pull/27", ("python", ">=3.9", None, None)),
    ("cannot-install-on-python",
     "    \"matplotlib>=3.3.0\",\nRuntimeError: Cannot install on Python version 3.8.20; only versions >=3.9,<3.13 are supported.",
     "https://github.com/synthpops/synthpops/issues/72", ("python", ">=3.9,<3.13", "3.8.20", None)),
    ("cannot-install-on-python",
     "    raise RuntimeError(msg.format(cur_py, min_py, max_py))\n"
     "RuntimeError: Cannot install on Python version 3.5.6; only versions >=3.6,<3.10 are supported.",
     "https://github.com/numba/llvmlite/pull/699", ("python", ">=3.6,<3.10", "3.5.6", None)),
    ("works-on-bound",
     "            print(\"%s only works with PyTorch >= 1.2. Skipping the test. ...\" % o, flush=True)",
     "https://github.com/fidelity/textwiser/blob/main/tests/test_word.py", ("torch", ">=1.2", None, None)),
    ("deepspeed-ops-built-for",
     "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version than what is "
     "being used at runtime. Please re-install DeepSpeed or switch torch versions. Install torch version=2.2, Runtime torch "
     "version=2.1",
     "https://github.com/daswer123/xtts-webui/issues/111", ("torch", "==2.2.*", "2.1", "deepspeed")),
]


def _read(row: Row) -> StatedVersion:
    phrasing, line, _source, _expected = row
    found = [sv for sv in stated_versions(line) if sv.phrasing == phrasing]
    assert found, f"{phrasing} read nothing from its line"
    return found[0]


@pytest.mark.parametrize("row", LINES, ids=[r[0] for r in LINES])
def test_each_phrasing_reads_its_real_line(row):
    sv = _read(row)
    assert (sv.subject, sv.wanted, sv.found, sv.by) == row[3]


@pytest.mark.parametrize("row", SECOND_LINES, ids=[f"{r[0]}-2" for r in SECOND_LINES])
def test_each_phrasing_reads_another_threads_line(row):
    sv = _read(row)
    assert (sv.subject, sv.wanted, sv.found, sv.by) == row[3]


def test_every_phrasing_has_a_real_line_and_there_are_forty():
    covered = {r[0] for r in LINES}
    assert covered == {p.id for p in PHRASINGS}
    assert len(PHRASINGS) >= 40
    assert all(r[2] for r in LINES + SECOND_LINES)


def test_each_phrasings_gate_is_what_every_match_holds():
    # A phrasing runs only on a text holding one of its GATES: they must be its required literals, so that a
    # changed pattern with a stale gate fails here instead of missing lines.
    from compat.explain.literals import required_literals
    from compat.explain.versions import GATES

    assert set(GATES) == {p.id for p in PHRASINGS}
    for p in PHRASINGS:
        assert set(GATES[p.id]) == required_literals(p.source), f"GATES[{p.id!r}]: {sorted(required_literals(p.source) or ())}"
    for row in LINES + SECOND_LINES:
        phrasing = next(p for p in PHRASINGS if p.id == row[0])
        assert phrasing.may_match(row[1]) and not phrasing.may_match(""), row[0]


def test_a_pair_the_message_states_equal_is_no_mismatch():
    text = ("xFormers was built for:\n    PyTorch 2.6.0+cu118 with CUDA 1107 (you have 2.6.0+cu118)\n"
            "    Python  3.10.17 (you have 3.10.17)")  # facebookresearch/xformers#1250: the cause is elsewhere
    assert stated_versions(text) == ()


def test_ray_states_the_python_of_both_sides_too():
    line = LINES[[r[0] for r in LINES].index("ray-version-mismatch")][1]
    assert [(s.subject, s.wanted, s.found) for s in stated_versions(line)] == [
        ("ray", "==2.12.0", "2.42.0"), ("python", "==3.11.*", "3.9.21")]


def test_the_side_to_change_comes_with_its_command_and_the_facts_decide_staleness():
    (sv,) = stated_versions(LINES[2][1])
    assert check(sv, None).command == "python -m pip install 'huggingface-hub>=0.19.3,<1.0'"
    env = _facts({"huggingface-hub": "0.17.1"})
    env = dataclasses.replace(env, python=dataclasses.replace(env.python, executable="/venv/bin/python"))
    checked = check(sv, env)
    assert (checked.installed, checked.satisfied) == ("0.17.1", False)
    assert checked.command == "/venv/bin/python -m pip install 'huggingface-hub>=0.19.3,<1.0'"
    stale = check(sv, _facts({"huggingface-hub": "0.26.0"}))
    # The installed version already fits: the message comes from another environment, and the command is for that
    # one, not for this interpreter.
    assert stale.satisfied is True and stale.command == "python -m pip install 'huggingface-hub>=0.19.3,<1.0'"


def test_host_sides_get_no_pip_command():
    for row in LINES:
        sv = check(_read(row), None)
        if sv.change is not Change.INSTALLED or sv.subject in ("python", "cudnn"):
            assert sv.command is None, row[0]


def test_the_docs_state_the_number_of_phrasings():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "explain.md").read_text()
    assert f"**Stated versions** (`compat/explain/versions.py`): {len(PHRASINGS)} phrasings" in text
    assert f"{len(SECOND_LINES)} more threads' lines" in text


# Each found side `_FOUND` reads, after a general statement (the statement of tests above, the tail of another wording).
FOUND_SIDES = [
    "RuntimeError: FSDP requires PyTorch >= 2.1.0, but found 2.0.1",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0 but found torch==2.0.1.",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0, you have 2.0.1",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0 (found 2.0.1)",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0. Your installed version is 2.0.1",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0; current version: 2.0.1",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0, got 2.0.1",
    "RuntimeError: FSDP requires PyTorch >= 2.1.0. Detected version 2.0.1.",
    "RuntimeError: PyTorch >= 2.1.0 is required, but you have torch 2.0.1",
    "RuntimeError: PyTorch 2.1.0 or newer is required.  You are running version 2.0.1",
]


@pytest.mark.parametrize("line", FOUND_SIDES)
def test_a_general_statement_reads_the_found_side_that_follows_it(line):
    (sv,) = stated_versions(line)
    assert (sv.subject, sv.wanted, sv.found) == ("torch", ">=2.1.0", "2.0.1")


@pytest.mark.parametrize("line, expected", [
    ("requires transformers>=4.58.0", ("transformers", ">=4.58.0")),
    ("requires torch >= 2.1", ("torch", ">=2.1")),
    ("requires vllm==0.8.5", ("vllm", "==0.8.5")),
    ("requires transformers version >= 4.58", ("transformers", ">=4.58")),
    ("requires the package peft~=0.11.1", ("peft", "~=0.11.1")),
    ("transformers>=4.40.0 is needed", ("transformers", ">=4.40.0")),
    ("flash-attn>=2.5.6,<2.6.0 required", ("flash-attn", ">=2.5.6,<2.6.0")),
    ("Python 3.9+ is required", ("python", ">=3.9")),
    ("accelerate version 0.26.0 or later is required", ("accelerate", ">=0.26.0")),
])
def test_the_general_wordings_read_every_operator_and_spacing(line, expected):
    (sv,) = stated_versions(f"RuntimeError: {line}")
    assert (sv.subject, sv.wanted) == expected and sv.change is Change.INSTALLED


@pytest.mark.parametrize("line", [
    "RuntimeError: This model requires version >= 4.5.0",
    "RuntimeError: minimum version 3.8 or higher is required",
    "ValueError: n_samples>=1 is required",  # a bare number: a count, not a release
    "ValueError: it requires batch_size > 0",
    "Requirement already satisfied: transformers>=4.58.0 in ./venv/lib/python3.11/site-packages (from trl) (4.58.1)",
    "Collecting vllm==0.8.5\n  Downloading vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl (326.4 MB)",
    "Collecting torch>=2.1.0 (from -r requirements.txt (line 1))",
    # Words before a bound are no package: the wording of public version checks ("... is too old. Please upgrade
    # to >= 18.0.0"), and a required side that names no package ("..., but version >= 0.15.1 is required").
    "Node.js version is too old. Please upgrade to >= 18.0.0",
    "The installed version of deepspeed is 0.14.4, but version >= 0.15.1 is required",
])
def test_words_that_are_no_package_and_pips_progress_read_nothing(line):
    assert stated_versions(line) == ()


def test_uv_reads_what_a_package_depends_on_not_what_you_require():
    line = "  ╰─▶ Because vllm==0.8.5 depends on torch==2.6.0 and you require torch==2.5.1, we can conclude that your requirements are"
    assert [(s.subject, s.wanted) for s in stated_versions(line)] == [("torch", "==2.6.0")]


def test_a_specific_phrasing_reads_its_words_first_and_a_general_one_adds_no_second_record():
    for row in LINES + SECOND_LINES:
        read = stated_versions(row[1])
        bounds = [(s.subject, s.wanted) for s in read]
        assert len(bounds) == len(set(bounds)), (row[0], bounds)
        assert read[0].phrasing == row[0], row[0]


def test_a_general_statement_is_known_with_its_command(catalog):
    from compat.explain.match import explain
    from compat.explain.verdict import ErrorVerdict
    from compat.report.explain import render_text

    for text, reason, command in [
        ("ValueError: FSDP requires PyTorch >= 2.1.0\n", "it states torch>=2.1.0", "python -m pip install 'torch>=2.1.0'"),
        ("AssertionError: AdversarialPatchPyTorch requires torch>=1.7.0\n", "it states torch>=1.7.0",
         "python -m pip install 'torch>=1.7.0'"),
        ("RuntimeError: Python version >= 3.9 required.\n", "it states python>=3.9", None),  # the host's side: no pip command
    ]:
        result = explain([text.encode()], catalog)
        (error,) = result.errors
        assert error.verdict is ErrorVerdict.KNOWN and error.reasons == (reason,), (text, error.verdict, error.reasons)
        report = render_text(result)
        assert (command in report) if command else ("pip install" not in report), (text, report)


@pytest.mark.parametrize(("text", "expected"), [
    # unsloth/models/gemma2.py (unslothai/unsloth): the minimum on the line after the model the release lacks.
    ("ImportError: Unsloth: Your transformers version of 4.40.0 does not support Gemma2.\nThe minimum required version is "
     "4.42.3.\nTry `pip install --upgrade \"transformers>=4.42.3\"`", ("transformers", ">=4.42.3", "4.40.0")),
    # unsloth/models/loader.py: a sentence between the two ("This includes Llama 3.1.").
    ("Unsloth: Your transformers version of 4.42.4 does not support new RoPE scaling methods.\nThis includes Llama 3.1. "
     "The minimum required version is 4.43.2", ("transformers", ">=4.43.2", "4.42.4")),
])
def test_unsloths_gate_reads_the_minimum_on_the_next_line(text, expected):
    (sv,) = [sv for sv in stated_versions(text) if sv.phrasing == "your-version-does-not-support"]
    assert (sv.subject, sv.wanted, sv.found) == expected
