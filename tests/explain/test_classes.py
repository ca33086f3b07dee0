"""Classes of environment failure named by their shape (matrix/signatures/classes.toml): they fire on the
structure that makes the failure the environment's (a .so linking libtorch symbols, a module path under
site-packages, an exception raised in a package's frames) and stay silent on the same words from the user's own
code; a catch-all yields to the API timeline when no release ever had the name."""

from __future__ import annotations

import pytest

from compat.errors import MatrixError
from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from compat.matrix import load_matrix
from compat.matrix.signatures import load_signatures
from tests.support.signature_entries import GOOD, entry_tables

MATRIX = load_matrix()
CLASSES = {"extension-built-for-another-torch", "shared-library-not-found", "import-name-missing-from-installed-package",
           "module-missing-in-package", "package-build-failed", "remote-code-written-for-another-transformers",
           "unsloth-compiled-code-out-of-step", "name-undefined-in-package-code",
           "checkpoint-tensor-unknown-to-loader", "build-system-header-missing", "internal-call-signature-mismatch",
           "stack-package-not-installed", "build-system-library-not-found",
           "package-code-needs-another-python", "package-release-does-not-compile", "shared-object-undefined-symbol"}

PACKAGE_RAISES = """Traceback (most recent call last):
  File "/home/user/train.py", line 3, in <module>
    from trl import GRPOTrainer
  File "/venv/lib/python3.11/site-packages/trl/trainer/callbacks.py", line 40, in <module>
    import weave
ModuleNotFoundError: No module named 'weave'
"""

USER_RAISES = """Traceback (most recent call last):
  File "/home/user/train.py", line 3, in <module>
    import my_utils
ModuleNotFoundError: No module named 'my_utils'
"""

CHECKOUT_RAISES = """Traceback (most recent call last):
  File "/data/me/workspace/RL/nemo_rl/models/policy/megatron_policy_worker.py", line 60, in <module>
    from nemo.tron import fault_tolerance
ModuleNotFoundError: No module named 'nemo'
"""


def _explain(text: str):
    return explain([text], MATRIX)


def _ids(text: str) -> list[str]:
    return [m.signature.id for m in _explain(text).matches]


def test_the_classes_are_catch_alls() -> None:
    entries = [s for s in MATRIX.signatures if s.id in CLASSES]
    assert len(entries) == len(CLASSES) and all(s.generic and not s.doctor for s in entries)


def test_a_module_a_package_imports_and_lacks_is_the_environment() -> None:
    result = _explain(PACKAGE_RAISES)
    assert "module-missing-in-package" in _ids(PACKAGE_RAISES)
    assert result.verdict is ErrorVerdict.KNOWN


def test_a_module_the_users_own_code_imports_is_not_named() -> None:
    assert "module-missing-in-package" not in _ids(USER_RAISES)
    assert _explain(USER_RAISES).verdict is not ErrorVerdict.KNOWN


def test_a_frameworks_source_checkout_counts_as_the_package_whatever_the_clone_is_called() -> None:
    assert "module-missing-in-package" in _ids(CHECKOUT_RAISES)


@pytest.mark.parametrize(("line", "fires"), [
    ("ImportError: cannot import name 'Thing' from 'pkgz.sub' (/venv/lib/python3.11/site-packages/pkgz/sub.py)", True),
    (r"ImportError: cannot import name 'Thing' from 'pkgz' (C:\env\Lib\site-packages\pkgz\__init__.py)", True),
    ("ImportError: cannot import name 'Thing' from 'helpers' (/home/user/project/helpers.py)", False),
    ("ImportError: cannot import name 'Thing' from 'pkgz'", False),
    # No path printed: a module of a package of the stack is an installed package's too (huggingface/transformers#38973;
    # a name of torch's C extension, which the API index cannot read, so only the class answers).
    ("ImportError: cannot import name 'ScalarType' from 'torch._C'", True),
    ("ImportError: cannot import name 'Thing' from 'torchvision_extra.sub'", False),
])
def test_an_import_name_class_needs_the_module_under_site_packages(line: str, fires: bool) -> None:
    assert ("import-name-missing-from-installed-package" in _ids(line + "\n")) is fires


@pytest.mark.parametrize(("line", "fires"), [
    ("ImportError: /venv/lib/python3.11/site-packages/xyz/_C.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN3c104cuda9SetDeviceEab", True),
    ("ImportError: /venv/lib/python3.11/site-packages/xyz/_C.so: undefined symbol: _ZNK2at10TensorBase8toStringEv", True),
    ("ImportError: /venv/lib/python3.11/site-packages/xyz/_C.so: undefined symbol: _Z20cutlass_moe_mm_sm100RN2at6TensorE", False),
    ("ImportError: /venv/lib/python3.11/site-packages/xyz/_C.so: undefined symbol: cuModuleLoadData", False),
])
def test_an_extension_class_needs_a_libtorch_symbol(line: str, fires: bool) -> None:
    assert ("extension-built-for-another-torch" in _ids(line + "\n")) is fires


@pytest.mark.parametrize("where", [" (/venv/lib/python3.11/site-packages/trl/__init__.py)", ""])
def test_a_name_no_release_ever_had_is_not_called_a_version_mismatch(where: str) -> None:
    # trl is in the shipped API index: no release exported this name, so the user misspelled it.
    line = f"ImportError: cannot import name 'GRPOTrainr' from 'trl'{where}\n"
    result = _explain(line)
    (error,) = result.errors
    assert error.api is not None and error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_a_name_no_release_had_that_an_installed_package_asks_for_is_the_environment() -> None:
    # The caller is a package, not the user: it was written against an unreleased build of the callee.
    log = ('  File "/venv/lib/python3.11/site-packages/vllm/multimodal/processing.py", line 12, in <module>\n'
           "    from trl import GRPOTrainr\n"
           "ImportError: cannot import name 'GRPOTrainr' from 'trl' (/venv/lib/python3.11/site-packages/trl/__init__.py)\n")
    (error,) = _explain(log).errors
    assert error.api is not None and error.api.caller == "vllm"
    assert error.verdict is ErrorVerdict.KNOWN and "vllm asks for it" in error.reasons[0]


@pytest.mark.parametrize(("line", "fires"), [
    ("  × Failed to build `flash-attn==2.8.3`", True),
    ("ERROR: Failed building wheel for flash-attn", True),
    ("ERROR: Failed to build installable wheels for some pyproject.toml based projects (flash-attn)", True),
    ("Failed to build the model: shapes do not match", False),
])
def test_a_build_failure_is_pip_or_uv_saying_so(line: str, fires: bool) -> None:
    assert ("package-build-failed" in _ids(line + "\n")) is fires


@pytest.mark.parametrize(("change", "message"), [
    ({"raised_in": "user"}, r"signature\[0\]\.raised_in: 'user' is not one of package"),
    ({"raised_in": "package", "patterns": [], "doctor": True}, r"signature\[0\]\.raised_in: needs `patterns`"),
])
def test_a_bad_raised_in_is_refused_with_file_and_key(change: dict, message: str) -> None:
    with pytest.raises(MatrixError, match=r"^matrix/signatures/x\.toml: " + message):
        load_signatures(entry_tables({**GOOD, **change}))
    (sig,) = load_signatures(entry_tables({**GOOD, "raised_in": "package"}))
    assert sig.raised_in == "package"


def test_an_attribute_no_release_had_is_not_blamed_on_the_frame_that_raised_it() -> None:
    # torch's Module.__getattr__ raises every missing attribute of a model: it is not who asked for it.
    log = ("Traceback (most recent call last):\n"
           '  File "/home/me/train.py", line 30, in <module>\n'
           "    trainer = GRPOTrainer(model=model)\n"
           '  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1931, in __getattr__\n'
           "    raise AttributeError(\n"
           "AttributeError: 'AutoModelForCausalLMWithValueHead' object has no attribute 'warnings_issuedx'\n")
    (error,) = _explain(log).errors
    assert error.verdict is not ErrorVerdict.KNOWN


@pytest.mark.parametrize("line", [
    "ValueError: The checkpoint you are trying to load has model type `qwen3_moe` but Transformers does not recognize this "
    "architecture.",
    # The same message pasted outside a code block: the renderer took the backticks.
    "ValueError: The checkpoint you are trying to load has model type qwen3_moe but Transformers does not recognize this "
    "architecture.",
])
def test_the_unknown_model_type_is_named_with_or_without_its_backticks(line: str) -> None:
    assert "transformers-unknown-model-type" in _ids(line + "\n")


_SITE = "/venv/lib/python3.11/site-packages/transformers/models/llama/__init__.py"


def test_a_name_no_release_had_and_like_no_released_one_is_not_called_a_typo() -> None:
    # LlamaFlashAttention2 is a release's name: a name that differs only in its digits is another generation (of a
    # development build, say), not a slip; nobody the log shows asked for it, so the catch-all names the mismatch.
    line = f"ImportError: cannot import name 'LlamaFlashAttention3' from 'transformers.models.llama' ({_SITE})\n"
    (error,) = _explain(line).errors
    assert error.api is not None and error.api.typo_of is None
    assert error.verdict is ErrorVerdict.KNOWN and error.signatures == ("import-name-missing-from-installed-package",)


def test_a_name_no_release_had_that_your_own_code_imports_is_the_programs() -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/home/me/train.py", line 3, in <module>\n'
           "    from transformers.models.llama import LlamaFlashAttention3\n"
           f"ImportError: cannot import name 'LlamaFlashAttention3' from 'transformers.models.llama' ({_SITE})\n")
    (error,) = _explain(log).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and "your own code asks for it" in error.reasons[0]


@pytest.mark.parametrize(("line", "home"), [
    # The wording of huggingface/trl#1639's traceback, whose script imports TrainingArguments from trl as well.
    ("ImportError: cannot import name 'TrainingArguments' from 'trl'\n", "transformers:TrainingArguments"),
    (f"ImportError: cannot import name 'LoraConfig' from 'transformers' ({_SITE})\n", "peft:LoraConfig"),
    ("ImportError: cannot import name 'SFTTrainer' from 'transformers'\n", "trl:SFTTrainer"),
])
def test_a_name_another_indexed_package_exports_is_imported_from_the_wrong_package(line: str, home: str) -> None:
    (error,) = _explain(line).errors
    assert error.api is not None and error.api.home_of == home
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and "the import names the wrong package" in error.reasons[0]


def test_a_name_elsewhere_asked_for_by_a_packages_import_stays_the_environment() -> None:
    # An installed package importing it from trl was written against a build of trl that had it (a fork).
    log = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.11/site-packages/pkgz/train.py", line 3, in <module>\n'
           "    from trl import TrainingArguments\n"
           "ImportError: cannot import name 'TrainingArguments' from 'trl'\n")
    (error,) = _explain(log).errors
    assert error.verdict is ErrorVerdict.KNOWN


_LOADER = ('  File "/venv/lib/python3.11/site-packages/vllm/model_executor/models/qwen2.py", line 371, in load_weights\n'
           "    param = params_dict[name]\n")
_OWN = '  File "/home/me/convert.py", line 12, in <module>\n    w = state["layers.0.mlp.down_proj.weight"]\n'


@pytest.mark.parametrize(("frames", "key", "fires"), [
    (_LOADER, "layers.0.mlp.down_proj.weight_scale", True),
    (_LOADER, "model.layers.0.mlp.experts.w13_bias", True),
    (_OWN, "layers.0.mlp.down_proj.weight", False),  # the user's own lookup
    (_LOADER, "prompt", False),  # not a tensor's name
    ("", "base_model.model.model.layers.0.self_attn.q_proj.weight", True),  # eosphoros-ai/DB-GPT-Hub#188's title: no frame
])
def test_a_checkpoint_tensor_the_loader_lacks_is_the_layout_not_the_user(frames: str, key: str, fires: bool) -> None:
    log = f"Traceback (most recent call last):\n{frames}KeyError: '{key}'\n" if frames else f"KeyError: '{key}'\n"
    assert ("checkpoint-tensor-unknown-to-loader" in _ids(log)) is fires
_REMOTE = "/root/.cache/huggingface/modules/transformers_modules/chatglm2-6b/tokenization_chatglm.py"
_COMPILED = "/content/unsloth_compiled_cache/UnslothGRPOTrainer.py"


def _raised(path: str, message: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/me/train.py", line 9, in <module>\n'
            "    main()\n"
            f'  File "{path}", line 104, in vocab_size\n'
            "    return self.tokenizer.n_words\n"
            f"{message}\n")


@pytest.mark.parametrize(("entry", "path", "message"), [
    ("remote-code-written-for-another-transformers", _REMOTE, "AttributeError: 'ChatGLMTokenizer' object has no attribute 'tokenizer'"),
    ("remote-code-written-for-another-transformers", _REMOTE, "TypeError: 'NoneType' object is not subscriptable"),
    ("unsloth-compiled-code-out-of-step", _COMPILED, "NameError: name 'has_images' is not defined"),
    ("unsloth-compiled-code-out-of-step", _COMPILED,
     "TypeError: _UnslothGRPOTrainer._get_per_token_logps() takes 5 positional arguments but 6 were given"),
])
def test_generated_code_failing_is_named_for_who_generated_it(entry: str, path: str, message: str) -> None:
    log = _raised(path, message)
    assert entry in _ids(log)
    # The same line without the generated code's frames, or raised by the user's own file on a stack that never ran it
    # while the generated code shows elsewhere in the log, is nobody's version mismatch.
    assert entry not in _ids(message + "\n")
    elsewhere = f'  File "{path}", line 1, in <module>\n' + _raised("/home/me/helpers.py", message)
    assert entry not in _ids(elsewhere)


def test_a_module_of_remote_code_that_is_missing_is_not_called_a_version_mismatch() -> None:
    # A dot in the model's directory name breaks transformers' dynamic import: no remote code ran.
    line = "ModuleNotFoundError: No module named 'transformers_modules.InternLM2'\n"
    assert "remote-code-written-for-another-transformers" not in _ids(line)


def test_a_name_remote_code_imports_yields_to_the_timeline_when_it_knows_the_release() -> None:
    # transformers 5 removed is_torch_fx_available, which many modeling files import: the timeline names the release.
    log = _raised(_REMOTE, "ImportError: cannot import name 'is_torch_fx_available' from 'transformers.utils.import_utils'")
    (error,) = _explain(log).errors
    assert error.verdict is ErrorVerdict.KNOWN and error.api is not None and error.api.removed_in == "5.0.0"


@pytest.mark.parametrize(("raiser", "fires"), [
    ("/venv/lib/python3.12/site-packages/transformers/integrations/bitsandbytes.py", True),
    ("/home/me/train.py", False),
])
def test_an_undefined_name_is_the_environment_only_in_a_packages_code(raiser: str, fires: bool) -> None:
    log = (f'  File "{raiser}", line 331, in <module>\n'
           "    def dequantize_bnb_weight(weight: torch.nn.Parameter, state=None):\n"
           "NameError: name 'torch' is not defined\n")
    assert ("name-undefined-in-package-code" in _ids(log)) is fires


def test_an_undefined_name_in_unsloths_generated_code_is_named_for_unsloth_first() -> None:
    # Both classes match; the one that asked for unsloth_compiled_cache's frames and found them is the narrower guess.
    log = _raised(_COMPILED, "NameError: name 'has_images' is not defined")
    assert _ids(log)[:2] == ["unsloth-compiled-code-out-of-step", "name-undefined-in-package-code"]


@pytest.mark.parametrize(("line", "fires"), [
    # NVIDIA-NeMo/RL's deep_ep build and torch's own CUDA header, as gcc, clang and MSVC print them.
    ("/tmp/deep_ep/csrc/kernels/ibgda_device.cuh:12:10: fatal error: infiniband/mlx5dv.h: No such file or directory", True),
    ("./tensorflow/contrib/verbs/rdma.h:21:10: fatal error: 'infiniband/verbs.h' file not found", True),
    ("fatal error C1083: Cannot open include file: 'openssl/opensslv.h': No such file or directory", True),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'config.h'", False),
    ("fatal error: too many errors emitted, stopping now", False),
])
def test_a_build_stopped_by_a_missing_header_is_named_by_the_compilers_own_line(line: str, fires: bool) -> None:
    assert ("build-system-header-missing" in _ids(line + "\n")) is fires


@pytest.mark.parametrize(("line", "fires"), [
    ("SyntaxError: non-default argument follows default argument (UnslothGKDTrainer.py, line 613)", True),
    ("RuntimeError: Direct module loading failed for unsloth_compiled_module_qwen3: positional argument follows keyword argument",
     True),
    # unsloth's fallback logs the optional trainers it skips (unslothai/unsloth#2476): no syntax error in it.
    ("Standard import failed for UnslothBCOTrainer: No module named 'UnslothBCOTrainer'. Using tempfile instead!", False),
    ("SyntaxError: non-default argument follows default argument (train.py, line 12)", False),
])
def test_generated_code_that_does_not_compile_is_named_only_for_a_generated_module(line: str, fires: bool) -> None:
    result = _explain(line + "\n")
    assert ("unsloth-compiled-code-does-not-compile" in [m.signature.id for m in result.matches]) is fires
    if fires:
        assert result.verdict is ErrorVerdict.KNOWN


PRIVATE_CALL_IN_PACKAGE = """Traceback (most recent call last):
  File "/home/user/train.py", line 138, in <module>
    trainer.train()
  File "/venv/lib/python3.11/site-packages/transformers/trainer.py", line 2206, in train
    return inner_training_loop(
  File "/venv/lib/python3.11/site-packages/trl/trainer/rloo_trainer.py", line 900, in _compute_loss
    logps = self._get_per_token_logps_and_entropies(model, ids, mask, keep, token_type_ids=tt)
TypeError: RLOOTrainer._get_per_token_logps_and_entropies() got an unexpected keyword argument 'token_type_ids'
"""

PRIVATE_CALL_IN_USER_CODE = """Traceback (most recent call last):
  File "/home/user/train.py", line 40, in <module>
    batch = _collate(rows, tokenizer)
TypeError: _collate() takes 1 positional argument but 2 were given
"""


@pytest.mark.parametrize(("log", "fires"), [
    (PRIVATE_CALL_IN_PACKAGE, True),
    # Printed without its traceback (unslothai/unsloth#2959's last line): nothing says the user's code raised it.
    ("TypeError: _unsloth_get_batch_samples() takes 3 positional arguments but 4 were given\n", True),
    ("TypeError: Error instantiating 'my_app.Optimizer' : __init__() got an unexpected keyword argument '_partial_'\n", True),
    (PRIVATE_CALL_IN_USER_CODE, False),
    ("TypeError: forward() got an unexpected keyword argument 'cache_position'\n", False),
    ("TypeError: __init__() got an unexpected keyword argument 'dispatch_batches'\n", False),
])
def test_an_internal_call_that_does_not_fit_is_named_unless_the_users_code_made_it(log: str, fires: bool) -> None:
    assert ("internal-call-signature-mismatch" in _ids(log)) is fires


CUT_ABOVE_THE_IMPORT = """Traceback (most recent call last):
  File "/home/user/generate/stage1.py", line 138, in <module>
    llm = sgl.Engine(model_path=model_path, tp_size=4)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ModuleNotFoundError: No module named 'sgl_kernel'
"""


@pytest.mark.parametrize(("log", "fires"), [
    ("ModuleNotFoundError: No module named 'flash_attn'\n", True),  # printed alone: nothing says whose import it was
    (PACKAGE_RAISES.replace("weave", "deepspeed"), True),  # a package's own import
    # The user's frame calls into a library (`sgl.Engine(...)`), it imports nothing: the traceback was cut above the
    # library frame that imported, so it is not the user's import.
    (CUT_ABOVE_THE_IMPORT, True),
    (USER_RAISES.replace("my_utils", "torch"), False),  # the user's own `import torch`: left to the user
    ("ModuleNotFoundError: No module named 'my_utils'\n", False),  # the user's own module: a typo or a path
    ("ModuleNotFoundError: No module named 'transformers.deepspeed'\n", False),  # a submodule that moved
    ("ModuleNotFoundError: No module named 'torchvision_extra'\n", False),
    # The framework's own ImportError naming a missing optional dependency (huggingface/trl#4286, lqtrung1998/mwp_ReFT#36,
    # lavoiems/DiscreteLatentCode#1 with the message on the line after the type).
    ("ImportError: vLLM is not installed. Please install it with `pip install trl[vllm]`.\n", True),
    ("ImportError: DeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.\n", True),
    ("ImportError:\nDeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.\n", True),
    ("ImportError: my_plugin is not installed\n", False),  # not a package of the stack
])
def test_a_package_of_the_stack_missing_from_the_interpreter_is_named_by_its_import_name(log: str, fires: bool) -> None:
    assert ("stack-package-not-installed" in _ids(log)) is fires


def test_an_import_error_cut_above_the_library_frame_is_not_the_users_own() -> None:
    (error,) = _explain(CUT_ABOVE_THE_IMPORT).errors
    assert error.root.cut_above_import and error.verdict is not ErrorVerdict.NOT_ENVIRONMENT
    (own,) = _explain(USER_RAISES).errors
    assert not own.root.cut_above_import and own.root.raiser is not None and own.root.raiser.code == "import my_utils"


@pytest.mark.parametrize(("line", "fires"), [
    ("../../x86_64-conda-linux-gnu/bin/ld: cannot find -lcudart: No such file or directory", True),
    ("compiler_compat/ld: cannot find -lcudart", True),
    ("LINK : fatal error LNK1181: cannot open input file 'aio.lib'", True),
    ("ValueError: cannot find -l option in config", False),
])
def test_a_build_stopped_at_the_link_step_is_named_by_the_linkers_own_line(line: str, fires: bool) -> None:
    assert ("build-system-library-not-found" in _ids(line + "\n")) is fires


def test_a_syntax_error_is_the_environments_only_in_a_packages_file() -> None:
    package = ('  File "/venv/lib/python3.9/site-packages/google/adk/tools/google_api_tool/__init__.py", line 39\n'
               "    match name:\n          ^\nSyntaxError: invalid syntax\n")
    own = '  File "/home/user/train.py", line 12\n    match name:\n          ^\nSyntaxError: invalid syntax\n'
    assert "package-code-needs-another-python" in _ids(package)
    assert "package-code-needs-another-python" not in _ids(own)


def test_an_indentation_error_is_a_broken_release_only_in_a_packages_file() -> None:
    package = ('  File "/venv/lib/python3.12/site-packages/pkgz/models/rl.py", line 372\n    return x\n    ^\n'
               "IndentationError: expected an indented block after 'try' statement on line 371\n")
    # InstaPy/InstaPy#1427: the same message from the user's own script
    own = ('File "quickstart3.py", line 12\n    session = InstaPy(username=insta_username,\n         ^\n'
           "IndentationError: unindent does not match any outer indentation level\n")
    assert "package-release-does-not-compile" in _ids(package)
    assert "package-release-does-not-compile" not in _ids(own)
    assert "package-code-needs-another-python" not in _ids(package)


def test_an_undefined_symbol_of_a_libtorch_build_is_named_for_torch_before_the_catch_all() -> None:
    torch_symbol = ("ImportError: /venv/lib/python3.11/site-packages/xyz/_C.so: undefined symbol: "
                    "_ZN3c104cuda9SetDeviceEab\n")
    assert _ids(torch_symbol)[:2] == ["extension-built-for-another-torch", "shared-object-undefined-symbol"]
    cuda_symbol = ("ImportError: Image-Adaptive-3DLUT/trilinear/_ext/trilinear/_trilinear.so: undefined symbol: "
                   "__cudaRegisterFatBinaryEnd\n")
    assert _ids(cuda_symbol) == ["shared-object-undefined-symbol"]


@pytest.mark.parametrize("line", [
    # rusty1s/pytorch_sparse#180, meta-pytorch/csprng#78, pytorch/pytorch#84339: macOS's dyld wording of the same failure.
    "OSError: dlopen(/Users/andrea/opt/anaconda3/envs/research/lib/python3.8/site-packages/torch_sparse/_version_cpu.so, 6): "
    "Symbol not found: __ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_S2_\n",
    "ImportError: dlopen(/Users/mikekg/Library/Python/3.7/lib/python/site-packages/torchcsprng/_C.cpython-37m-darwin.so, 2): "
    "Symbol not found: __ZN3c104impl23ExcludeDispatchKeyGuardC1ENS_11DispatchKeyE\n",
    "ImportError: dlopen(/Users/m1/venv/lib/python3.8/site-packages/custom_extensions/ext.cpython-38-darwin.so, 0x0002): "
    "symbol not found in flat namespace (__ZNK2at10TensorBase8data_ptrIlEEPT_v)\n",
])
def test_macos_dyld_words_an_undefined_symbol_its_own_way(line: str) -> None:
    assert "shared-object-undefined-symbol" in _ids(line)


def test_a_dlopen_failure_that_is_no_missing_symbol_is_not_one() -> None:
    # pytorch/pytorch#39640: a library dyld cannot find is another failure (a missing library, not a symbol).
    line = ("ImportError: dlopen(/Library/Frameworks/Python.framework/Versions/3.8/lib/python3.8/site-packages/torch/"
            "_C.cpython-38-darwin.so, 2): Library not loaded: @rpath/libc++.1.dylib\n")
    assert "shared-object-undefined-symbol" not in _ids(line)
