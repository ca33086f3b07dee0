"""Two classes read by their words wherever they stand (issue 23): pip's and uv's steps of a source build that failed
(no wheel matched, so the package was built here), and the dynamic loader's undefined symbol without the `.so: ` before
it (a title cut there, a sentence or a warning that quotes it). Each line is a real one, with its thread."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict


def _ids(catalog, text: str) -> list[str]:
    return [m.signature.id for m in explain([text], catalog).matches]


@pytest.mark.parametrize("line", [
    # Dao-AILab/flash-attention#224 and QwenLM/Qwen#10 (pip's legacy setup.py build), #279 and #395 (its summary).
    "  Building wheel for flash-attn (setup.py) ... error",
    "  × python setup.py bdist_wheel did not run successfully.",
    "ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects",
    # state-spaces/mamba#731 (a PEP 517 backend), #481 and midrender/mamba-chat#3 (the requirements step, before any
    # compiler runs: setup.py imports torch, which build isolation hides).
    "  × Building wheel for mamba-ssm (pyproject.toml) did not run successfully.",
    "  Building wheel for mamba-ssm (pyproject.toml) ... error",
    "  × Getting requirements to build wheel did not run successfully.",
    # googlecolab/colabtools#4950: the marker pip prints under each of them.
    "  error: subprocess-exited-with-error",
])
def test_each_step_of_a_failed_source_build_names_the_class(catalog, line):
    result = explain([line + "\n"], catalog)
    assert "package-build-failed" in [m.signature.id for m in result.matches]
    assert result.verdict is ErrorVerdict.KNOWN


@pytest.mark.parametrize("line", [
    # pip's steps that succeeded, and words about building that are no build of a package.
    "  Building wheel for flash-attn (setup.py) ... done",
    "  Preparing metadata (setup.py) ... done",
    "  Getting requirements to build wheel ... done",
    "Failed to build the model: shapes do not match",
])
def test_a_build_step_that_succeeded_is_not_a_failure(catalog, line):
    assert "package-build-failed" not in _ids(catalog, line + "\n")


def test_a_compilers_error_above_the_build_summary_names_the_cause(catalog):
    # mamba-ssm's setup.py (bowang-lab/U-Mamba#76) warns that nvcc is missing, then pip's requirements step fails: the
    # specific entry (no CUDA toolkit for the build) ranks before the generic build failure.
    text = ("  error: subprocess-exited-with-error\n\n  × Getting requirements to build wheel did not run successfully.\n"
            "  │ exit code: 1\n"
            "      <string>:118: UserWarning: mamba_ssm was requested, but nvcc was not found.  Are you sure your environment "
            "has nvcc available?  If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, "
            "only images whose names contain 'devel' will provide nvcc.\n")
    ids = _ids(catalog, text)
    assert ids.index("cuda-home-not-set-for-build") < ids.index("package-build-failed")


@pytest.mark.parametrize(("line", "torch"), [
    # lufficc/SSD#125: a sentence quoting libtorch's symbols without the module.
    ("`undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE` and "
     "`undefined symbol: _ZN6caffe26detail37_typeMetaDataInstance_preallocated_32E`.", True),
    # pytorch/pytorch#6097 and stepjam/PyRep#19: the loader's words in prose, a C symbol.
    ("However, after installing the extension, an ```undefined symbol: THPVariableClass``` error is raised when I try to "
     "import it into python.", False),
    ("I have been getting this import error: undefined symbol: simExtGetExitRequest", False),
])
def test_the_loaders_words_without_the_module_are_the_same_class(catalog, line, torch):
    result = explain([line + "\n"], catalog)
    ids = [m.signature.id for m in result.matches]
    assert "shared-object-undefined-symbol" in ids and result.verdict is ErrorVerdict.KNOWN
    assert ("extension-built-for-another-torch" in ids) is torch


def test_a_warning_that_quotes_the_loader_is_the_same_class(catalog):
    # casperg92/MaSIF_colab#7: torchvision's warning quotes the loader's line; AUTOMATIC1111/stable-diffusion-webui#11343:
    # the same warning quoting a library the loader cannot open.
    symbol = ("/usr/local/lib/python3.9/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python "
              "extension: '/usr/local/lib/python3.9/dist-packages/torchvision/image.so: undefined symbol: "
              "_ZN3c104impl8GPUTrace13gpuTraceStateE'If you don't plan on using image functionality from `torchvision.io`, "
              "you can ignore this warning.\n")
    library = ("/home/zzz/AUTO11/stable-diffusion-webui/venv/lib/python3.10/site-packages/torchvision/io/image.py:13: "
               "UserWarning: Failed to load image Python extension: 'libc10_hip.so: cannot open shared object file: "
               "No such file or directory'If you don't plan on using image functionality from `torchvision.io`, you can "
               "ignore this warning.\n")
    assert "extension-built-for-another-torch" in _ids(catalog, symbol)
    assert "shared-library-not-found" in _ids(catalog, library)


@pytest.mark.parametrize("line", [
    # rosalindfranklininstitute/parakeet#6: prose about the class without a symbol; and source that builds the message:
    # no loader said either.
    "I'm getting undefined symbol errors, I assume this is some mismatch between the compiled extension and python?",
    '    raise ImportError(f"undefined symbol: {name}")',
])
def test_words_about_undefined_symbols_without_one_are_not_the_class(catalog, line):
    assert "shared-object-undefined-symbol" not in _ids(catalog, line + "\n")


@pytest.mark.parametrize(("line", "entry"), [
    # Windows' loader: WinError 127, a procedure (symbol) the DLL lacks: Wan-Video/Wan2.1#47,
    # sunsetcoder/flash-attention-windows#6.
    ("ImportError: DLL load failed while importing flash_attn_2_cuda: The specified procedure could not be found.",
     "shared-object-undefined-symbol"),
    # WinError 126, the module or a DLL it links is missing: oobabooga/textgen#7386, pytorch/pytorch#28363 and #9344.
    ("ImportError: DLL load failed while importing flash_attn_2_cuda: The specified module could not be found.",
     "shared-library-not-found"),
    ("ImportError: DLL load failed: The specified module could not be found.", "shared-library-not-found"),
])
def test_windows_loader_words_are_the_same_classes(catalog, line, entry):
    result = explain([line + "\n"], catalog)
    assert entry in [m.signature.id for m in result.matches] and result.verdict is ErrorVerdict.KNOWN
