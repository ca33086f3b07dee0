"""The four verdicts on the project's logs: known, known-usage, unknown-environment, not-environment,
each with the reasons it rests on."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from compat.explain.match import explain
from compat.explain.verdict import Clue, ErrorVerdict
from compat.report.explain import render_github, render_json, render_markdown, render_text
from tests.support.paths import LOGS

# The kinds of error that speak of a library and what it was combined with (issue 23: never
# `not-environment` when a package's own frame raised them).
LIBRARY_KINDS = ("ImportError", "ModuleNotFoundError", "AttributeError", "TypeError", "OSError", "NameError")


def _every_log():
    return sorted(p for p in LOGS.rglob("*.log") if p.is_file())


@pytest.mark.parametrize("log", _every_log(), ids=lambda p: str(p.relative_to(LOGS)))
def test_an_error_raised_inside_a_package_is_never_not_environment(log, catalog):
    result = explain([log.read_bytes()], catalog)
    for e in result.errors:
        frame = e.root.innermost
        if frame is not None and frame.package is not None and e.root.short_type in LIBRARY_KINDS:
            assert e.verdict is not ErrorVerdict.NOT_ENVIRONMENT, (log.name, e.root.type, e.root.message[:120])
        assert e.reasons, (log.name, e.verdict)  # every verdict says what it rests on
    # Every format renders every verdict: a clue without words made the text of an error with it exit 3.
    for render in (render_text, render_markdown, render_github, render_json):
        assert render(result)


def test_every_usage_signature_is_known_usage_on_its_own_log(catalog):
    usage = [s for s in catalog.signatures if s.usage]
    assert len(usage) >= 10
    for sig in usage:
        log = LOGS / f"{sig.id}.log"
        result = explain([log.read_bytes()], catalog)
        assert sig.id in [m.signature.id for m in result.matches], sig.id
        if sig.notice:  # a harmless line (a deprecation the user's call triggers) is a note, never a verdict
            assert not result.known and sig.id not in [m.signature.id for m in result.failures], sig.id
        elif all(m.signature.usage or m.signature.wrapper for m in result.matches):
            assert result.verdict is ErrorVerdict.KNOWN_USAGE, sig.id
            assert result.known  # a named cause: explain exits 0
    assert not any(s.usage for s in catalog.signatures if s.id.startswith(("cuda-driver", "flash-attn-undefined", "nccl-")))


def test_a_usage_mistake_reads_as_one_in_text_and_json(catalog):
    result = explain([(LOGS / "tokenizer-no-chat-template.log").read_bytes()], catalog)
    assert result.verdict is ErrorVerdict.KNOWN_USAGE
    assert "Verdict: a configuration mistake compat recognises, not the environment (known-usage)." in render_text(result)
    doc = json.loads(render_json(result))
    assert doc["verdict"] == "known-usage"
    assert any("tokenizer-no-chat-template" in r for e in doc["errors"] for r in e["reasons"])


_USER_KEYERROR = """Traceback (most recent call last):
  File "/home/me/train.py", line 41, in <module>
    row = batch["chosen"]
KeyError: 'chosen'
"""

_LIBRARY_RUNTIME = """Traceback (most recent call last):
  File "/home/me/train.py", line 12, in <module>
    trainer.train()
  File "/opt/venv/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 880, in _generate
    self.llm.collective_rpc("reload_weights")
  File "/opt/venv/lib/python3.11/site-packages/vllm/v1/engine/core_client.py", line 301, in collective_rpc
    raise RuntimeError(f"Worker failed with error '{err}'")
RuntimeError: Worker failed with error 'engine core dead'
"""


def test_not_environment_says_where_the_error_was_raised(catalog):
    result = explain([_USER_KEYERROR.encode()], catalog)
    (error,) = result.errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert error.reasons == ("raised in your own code (/home/me/train.py:41)",)
    assert "why: raised in your own code (/home/me/train.py:41)" in render_text(result)


def test_an_error_a_package_raised_is_about_the_environment(catalog):
    result = explain([_LIBRARY_RUNTIME.encode()], catalog)
    (error,) = result.errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.LIBRARY in error.clues
    assert [p.name for p in error.packages] == ["vllm", "trl"]


def test_a_stated_mismatch_is_known_with_its_command(catalog):
    text = "ImportError: peft>=0.15.0 is required for a normal functioning of this module, but found peft==0.14.0.\n"
    result = explain([text.encode()], catalog)
    (error,) = result.errors
    assert error.verdict is ErrorVerdict.KNOWN and error.reasons == ("it states peft>=0.15.0, found 0.14.0",)
    assert "python -m pip install 'peft>=0.15.0'" in render_text(result)


_CHECKOUT_RUNTIME = """Traceback (most recent call last):
  File "/home/me/run.py", line 9, in <module>
    main()
  File "/workspace/verl/verl/single_controller/base/worker_group.py", line 51, in __call__
    return getattr(self.worker_group, self.method_name)(*args, **kwargs)
RuntimeError: method update_weights is not registered on this worker group
"""

_NOTEBOOK = """---------------------------------------------------------------------------
TypeError                                 Traceback (most recent call last)
Cell In[4], line 2
      1 from trl import SFTTrainer
----> 2 trainer = SFTTrainer(model=model, tokenizer=tok, train_dataset=ds)
File /usr/local/lib/python3.11/dist-packages/trl/trainer/sft_trainer.py:512, in SFTTrainer.__init__(self, model, args)
    510     raise ValueError("x")
--> 512 super().__init__(model=model, **kwargs)
TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'
"""


def test_a_frame_in_a_frameworks_source_checkout_is_the_frameworks(catalog):
    from compat.explain.owners import package_of

    assert package_of("/workspace/verl/verl/workers/fsdp_workers.py") == "verl"
    assert package_of("/root/LLaMA-Factory/src/llamafactory/extras/misc.py") == "llamafactory"
    assert package_of("/home/u/OpenRLHF/openrlhf/cli/train_ppo_ray.py") == "openrlhf"
    assert package_of("/home/me/trl/train.py") is None  # a folder named like a package is not its checkout
    assert package_of("/home/me/proj/src/mylib/data.py") is None
    (error,) = explain([_CHECKOUT_RUNTIME.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and {Clue.LIBRARY, Clue.REGISTRY} & set(error.clues)  # verl's own frame


_EXAMPLE_SCRIPT = """Traceback (most recent call last):
  File "transformers/examples/flax/summarization/run_summarization_flax.py", line 808, in <module>
    main()
  File "transformers/examples/flax/summarization/run_summarization_flax.py", line 352, in main
    if data_args.test_file is not None:
AttributeError: 'DataTrainingArguments' object has no attribute 'test_file'
"""
"""huggingface/transformers#12527: an example script of a transformers clone, run as the user's program."""


@pytest.mark.parametrize("path", [
    "/data/transformers/examples/legacy/run_language_modeling.py",  # huggingface/transformers#21615's first frame
    "/home/u/trl/examples/scripts/sft.py",
    "/root/peft/examples/sft/utils.py",
    "/workspace/verl/recipe/dapo/main_dapo.py",
    "/srv/LLaMA-Factory/scripts/vllm_infer.py",
    "/srv/vllm/tests/conftest.py",
])
def test_a_checkouts_examples_scripts_and_tests_are_the_users_code(catalog, path: str) -> None:
    """A clone's examples/, scripts/, tests/ or recipes/ are programs the user runs and edits, not the package, whose
    own code stays attributed (`.../peft/src/peft/`, `.../verl/verl/`)."""
    from compat.explain.owners import package_of

    assert package_of(path) is None
    assert package_of("/root/peft/src/peft/tuners/lora/model.py") == "peft"
    assert package_of("/workspace/verl/verl/trainer/main_ppo.py") == "verl"
    log = _EXAMPLE_SCRIPT.replace("transformers/examples/flax/summarization/run_summarization_flax.py", path)
    (error,) = explain([log.encode()], catalog).errors
    assert [f.package for f in error.root.frames] == [None, None]
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_the_example_scripts_own_attribute_error_is_not_the_environments(catalog):
    (error,) = explain([_EXAMPLE_SCRIPT.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_a_notebook_traceback_reads_the_librarys_frames(catalog):
    (error,) = explain([_NOTEBOOK.encode()], catalog).errors
    assert [f.package for f in error.root.frames] == [None, "trl"]
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT and Clue.API in error.clues


def test_without_evidence_of_the_users_code_it_is_never_not_environment(catalog):
    lone = explain([b"AttributeError: 'RolloutWorker' object has no attribute 'sync_weights'\n"], catalog)
    assert lone.errors[0].verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.API in lone.errors[0].clues
    bare = explain([b"RuntimeError: something went wrong in the rollout\n"], catalog)
    assert bare.errors[0].verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT
    assert bare.errors[0].reasons == ("no frame of your code raised it and its type is not one of data or logic",)
    data = explain([b"KeyError: 'prompt'\n"], catalog)  # a data error needs no frame to be the program's
    assert data.errors[0].verdict is ErrorVerdict.NOT_ENVIRONMENT
    builtin = explain([b"AttributeError: 'str' object has no attribute 'input_ids'\n"], catalog)
    assert Clue.API not in builtin.errors[0].clues


@pytest.mark.parametrize("line", [
    # unslothai/unsloth#4950: the model needs a newer unsloth than the one installed.
    b"NotImplementedError: Unsloth: google/gemma-4-31B-it is not supported in your current Unsloth version! Please update Unsloth via\n",
    # hiyouga/LlamaFactory#6784: a ValueError (a data type) that says the installed release is too old.
    b"ValueError: The checkpoint you are trying to load has model type `qwen2_5_vl` but Transformers does not recognize this "
    b"architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.\n",
    # bitsandbytes-foundation/bitsandbytes#815: the fix it names is an upgrade of a package.
    b"ValueError: 4 bit quantization requires bitsandbytes>=0.39.0 - please upgrade your bitsandbytes version\n",
])
def test_a_message_that_asks_to_update_a_package_is_about_the_environment(catalog, line):
    # An error of a data type (ValueError) whose message tells the user to update a named package, or says the
    # installed release is too old for what was asked, is about the environment even with no frame printed.
    (error,) = explain([line], catalog).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT and Clue.VERSION in error.clues, error.reasons


@pytest.mark.parametrize(("line", "verdict"), [
    # A TypeError about the values an operation met speaks of the data, even with no frame printed...
    (b"TypeError: '>' not supported between instances of 'int' and 'NoneType'\n", ErrorVerdict.NOT_ENVIRONMENT),
    (b"TypeError: string indices must be integers\n", ErrorVerdict.NOT_ENVIRONMENT),
    (b"TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n", ErrorVerdict.NOT_ENVIRONMENT),
    # ...a TypeError about a callable's signature or a None where a library's function was expected does not.
    (b"TypeError: 'NoneType' object is not callable\n", ErrorVerdict.UNKNOWN_ENVIRONMENT),
    (b"TypeError: forward() got an unexpected keyword argument 'cache_position'\n", ErrorVerdict.UNKNOWN_ENVIRONMENT),
])
def test_a_frameless_type_error_about_values_is_the_datas(catalog, line, verdict):
    (error,) = explain([line], catalog).errors
    assert error.verdict is verdict, error.reasons


def test_a_type_error_about_values_raised_in_a_package_stays_a_suspect(catalog):
    log = (b'  File "/venv/lib/python3.11/site-packages/swift/llm/template/base.py", line 1203, in _data_collator\n'
           b"    padding_to = max(padding_to, 64)\n"
           b"TypeError: '>' not supported between instances of 'int' and 'NoneType'\n")
    (error,) = explain([log], catalog).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT


# Cut in a function that checks no version (a cut inside a dependency gate, `assert_pkg_version`, is named: see
# tests/explain/test_unwritten_classes.py).
_CUT_IN_A_PACKAGE = """Traceback (most recent call last):
  File "/home/me/train.py", line 3, in <module>
    from sglang.srt.utils import get_nvgpu_memory_capacity
  File "/sgl-workspace/sglang/python/sglang/srt/utils.py", line 684, in get_nvgpu_memory_capacity
    result = subprocess.run(["nvidia-smi", "--query-gpu=memory.total"], capture_output=True)
"""

_CUT_IN_USER_CODE = """Traceback (most recent call last):
  File "/home/me/train.py", line 12, in <module>
    main()
"""


def test_a_traceback_the_paste_cut_before_its_exception_is_still_an_error(catalog):
    result = explain([_CUT_IN_A_PACKAGE], catalog)
    (error,) = result.errors
    assert error.root.message.startswith("the log ends inside this traceback")
    assert error.root.raiser is not None and error.root.raiser.package == "sglang"
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.LIBRARY in error.clues
    (error,) = explain([_CUT_IN_USER_CODE], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and "your own code" in error.reasons[0]
    assert explain(["Traceback (most recent call last):\n"], catalog).errors == ()


def test_the_interpreters_own_frames_do_not_make_an_error_the_users(catalog):
    # importlib's frame is innermost; the package that called it is whose failure it is.
    log = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.11/site-packages/unsloth/models/rl.py", line 12, in patch\n'
           "    mod = importlib.import_module(name)\n"
           '  File "/usr/lib/python3.11/importlib/__init__.py", line 126, in import_module\n'
           "    return _bootstrap._gcd_import(name[level:], package, level)\n"
           "RuntimeError: patching failed\n")
    (error,) = explain([log], catalog).errors
    assert error.root.innermost is not None and error.root.innermost.package is None
    assert error.root.raiser is not None and error.root.raiser.package == "unsloth"
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT


def test_colab_links_its_frames_and_they_are_read(catalog):
    log = ("IndexError                                Traceback (most recent call last)\n"
           "[/tmp/ipython-input-3966643938.py](https://localhost:8080/#) in <cell line: 0>()\n"
           "----> 1 from unsloth import FastLanguageModel\n"
           "[/usr/local/lib/python3.12/dist-packages/unsloth/models/rl.py](https://localhost:8080/#) in patch_functions(RLTrainer)\n"
           "--> 854             last_prev_line = sampling_params.split(\"\\n\")[-2]\n")
    (error,) = explain([log], catalog).errors
    assert [f.package for f in error.root.frames] == [None, "unsloth"]
    assert error.root.frames[-1].function == "patch_functions" and error.root.frames[-1].line is None


@pytest.mark.parametrize(("line", "verdict"), [
    # hiyouga/LlamaFactory#6456: a training YAML given to `llamafactory-cli export`. The catch-all
    # hf-argparser-unknown-config-keys matches too, but the specific usage entry names the mistake and decides.
    (b"ValueError: Some keys are not used by the HfArgumentParser: ['bf16', 'ddp_timeout', 'do_train', 'output_dir']\n",
     ErrorVerdict.KNOWN_USAGE),
    # hiyouga/LlamaFactory#7677's kind: a key renamed between releases; only the catch-all matches, and it decides.
    (b"ValueError: Some keys are not used by the HfArgumentParser: ['dpo_beta']\n", ErrorVerdict.KNOWN),
])
def test_a_catch_all_never_overrules_the_specific_entry_of_the_same_error(catalog, line, verdict):
    result = explain([line], catalog)
    (error,) = result.errors
    assert "hf-argparser-unknown-config-keys" in error.signatures
    assert error.verdict is verdict and result.verdict is verdict, error.reasons


# QwenLM/Qwen-VL#470: vLLM's config asserts with no message on a rope_scaling written by a newer transformers
# (solved by a matching vLLM and transformers pair, vllm-project/vllm#8388).
_BARE_ASSERT_IN_PACKAGE = """Traceback (most recent call last):
  File "/home/hibug/anaconda3/envs/mllm/lib/python3.10/site-packages/vllm/config.py", line 227, in __init__
    self.max_model_len = _get_and_verify_max_len(
  File "/home/hibug/anaconda3/envs/mllm/lib/python3.10/site-packages/vllm/config.py", line 1747, in _get_and_verify_max_len
    assert "factor" in rope_scaling
AssertionError
"""


def test_a_bare_assert_inside_a_package_is_its_invariant_not_the_users_data(catalog):
    (error,) = explain([_BARE_ASSERT_IN_PACKAGE.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.KNOWN and error.signatures == ("vllm-rope-scaling-without-factor",), error.reasons
    # Without the source line no entry names it; the bare assert in the package's frame still points at the environment.
    unnamed = _BARE_ASSERT_IN_PACKAGE.replace('    assert "factor" in rope_scaling\n', "")
    (error,) = explain([unnamed.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.LIBRARY in error.clues, error.reasons
    # An assertion that says what it wants checks the caller's input, and one with no frame is placed nowhere.
    said = unnamed.replace("AssertionError\n", "AssertionError: batch size must divide the GPUs\n")
    assert explain([said.encode()], catalog).errors[0].verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert explain([b"AssertionError\n"], catalog).errors[0].verdict is ErrorVerdict.NOT_ENVIRONMENT


@pytest.mark.parametrize(("line", "verdict"), [
    # hiyouga/LlamaFactory#6784's title and QwenLM/Qwen3#247's (inside a Chinese sentence): transformers' model-type
    # lookup, printed with no traceback; the timeline knows both keys, so the installed release is older than the model.
    ("KeyError: 'qwen2_5_vl'\n", ErrorVerdict.KNOWN),
    ("QWen1.5 推理报错\uff1aKeyError: 'qwen2'\n", ErrorVerdict.KNOWN),  # \uff1a: the full-width colon
    # A key no transformers release registers is the program's data, and asks the timeline nothing.
    ("KeyError: 'label_2'\n", ErrorVerdict.NOT_ENVIRONMENT),
])
def test_a_frameless_keyerror_on_a_model_type_transformers_registers_asks_the_timeline(catalog, line, verdict):
    (error,) = explain([line.encode()], catalog).errors
    assert error.verdict is verdict, error.reasons
    assert (error.api is not None and error.api.package == "transformers") is (verdict is ErrorVerdict.KNOWN)


def test_generate_refusing_model_kwargs_is_about_an_api_not_the_data(catalog):
    # huggingface/peft#506's title: generate() names a keyword the model's forward does not take (a tokenizer or a
    # processor of another release produced it); a ValueError, but it speaks of an API, not of the program's data.
    line = (b"ValueError: The following model_kwargs are not used by the model: ['token_type_ids'] (note: typos in the "
            b"generate arguments will also show up in this list)\n")
    (error,) = explain([line], catalog).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.API in error.clues


def test_a_harmless_line_beside_a_run_that_worked_is_a_note_not_a_failure(catalog):
    """A notice (severity info) is explained but names no failure; with a real error beside it, the error decides."""
    notice = next(s for s in catalog.signatures if s.id == "transformers-gc-use-cache-conflict")
    line = (LOGS / f"{notice.id}.log").read_text(encoding="utf-8").splitlines()[0]
    ran = f"{{'loss': 0.51, 'epoch': 0.1}}\n{line}\n{{'train_runtime': 30.1, 'epoch': 1.0}}\n".encode()
    result = explain([ran], catalog)
    assert [m.signature.id for m in result.matches] == [notice.id] and not result.failures
    assert not result.known and result.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and not result.errors
    failed = ran + b"ImportError: cannot import name 'PreTrainedModel' from 'transformers'\n"
    result = explain([failed], catalog)
    assert notice.id not in [m.signature.id for m in result.failures]
    assert [e.root.short_type for e in result.errors] == ["ImportError"]


# A package's registry refusing a name in its own frames is no data or logic of the program's, whatever the type: the
# release may predate the model asked of it (FunASR's AutoModel, transformers' auto classes). Raised in the user's
# own code, the same words are the program's own check.
_REGISTRY = """Traceback (most recent call last):
  File "/home/user/asr/run.py", line 22, in <module>
    model = AutoModel(model="FunAudioLLM/Fun-ASR-Nano")
  File "/home/user/env/lib/python3.10/site-packages/funasr/auto/auto_model.py", line 264, in build_model
    assert model_class is not None, f'{kwargs["model"]} is not registered'
AssertionError: FunASRNano is not registered
"""


def test_a_packages_registry_refusing_a_name_is_about_the_environment(catalog):
    (error,) = explain([_REGISTRY.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and "clue: registry" in error.reasons
    own = _REGISTRY.replace("/home/user/env/lib/python3.10/site-packages/funasr/auto/auto_model.py", "/home/user/asr/models.py")
    (error,) = explain([own.encode()], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert Clue.REGISTRY.value == "registry"


@pytest.mark.parametrize("line", [
    # huggingface/diffusers#9670: diffusers' LoRA methods where peft is not importable (a ValueError, no version named).
    b"ValueError: PEFT backend is required for this method.\n",
    # lqtrung1998/mwp_ReFT#36's title: accelerate's gate for DeepSpeed.
    b"ImportError: DeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.\n",
])
def test_a_message_that_says_a_package_is_missing_is_about_the_environment(catalog, line):
    # Without the catalog's entry for diffusers' message, the words alone say the environment lacks a package.
    unnamed = SimpleNamespace(signatures=tuple(s for s in catalog.signatures if s.id != "diffusers-peft-backend-unavailable"))
    (error,) = explain([line], unnamed).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT and Clue.MISSING in error.clues, error.reasons


def test_diffusers_peft_backend_is_named(catalog):
    (error,) = explain([b"Could not load lora: PEFT backend is required for this method.\n"], catalog).errors
    assert error.verdict is ErrorVerdict.KNOWN and error.signatures == ("diffusers-peft-backend-unavailable",)


# GongyeLiu/StyleCrafter#12's error, raised where the program's own attention module calls xformers by its path (the
# paste doubled its line breaks, as threestudio-project/threestudio's issues print it).
_XFORMERS_CALL = (b'  File "/home/u/StyleCrafter/lvdm/modules/attention.py", line 258, in forward\n\n'
                  b"    out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)\n\n"
                  b"TypeError: memory_efficient_attention() got an unexpected keyword argument 'attn_bias'\n")


def test_a_refused_call_written_into_a_package_is_the_environments_suspect(catalog):
    (error,) = explain([_XFORMERS_CALL], catalog).errors
    assert error.root.innermost is not None and error.root.innermost.code is not None  # read across the blank line
    assert error.root.innermost.code.startswith("out = xformers.ops.memory_efficient_attention(")
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT
    assert "the call goes into xformers (xformers.ops.memory_efficient_attention)" in error.reasons[0]


def test_a_refused_call_into_the_programs_own_object_stays_the_programs(catalog):
    own = _XFORMERS_CALL.replace(b"xformers.ops.memory_efficient_attention(", b"self.attention.memory_efficient_attention(")
    (error,) = explain([own], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and "your own code" in error.reasons[0]


def test_the_programs_own_please_install_is_its_own(catalog):
    # The program's own check of its data reads like a missing package; raised in its own frame, it is the program's.
    log = (b'  File "/home/u/proj/train.py", line 12, in main\n'
           b"    raise ValueError('Please install the dataset under ./data first')\n"
           b"ValueError: Please install the dataset under ./data first\n")
    (error,) = explain([log], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and Clue.MISSING not in error.clues


def test_a_call_into_a_folder_programs_name_datasets_stays_the_programs(catalog):
    # facebookresearch/detr's `datasets/` is the program's own package: a refused call into it is not drift.
    own = _XFORMERS_CALL.replace(b"out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)",
                                 b"dataset_train = datasets.build_dataset(image_set='train', argz=args)")
    own = own.replace(b"memory_efficient_attention() got an unexpected keyword argument 'attn_bias'",
                      b"build_dataset() got an unexpected keyword argument 'argz'")
    (error,) = explain([own], catalog).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT, error.reasons


# goombalab/hydra#10 (Triton's compiler on Colab, an IPython traceback) and triton-lang/triton#155 (every kernel on the
# reporter's machine), as pasted: a C++ std::map lookup that failed inside Triton, which pybind11 passes on as an
# IndexError. Not the program's data: the compiler's own code failed.
_NATIVE = (
    b"/usr/local/lib/python3.10/dist-packages/triton/compiler/backends/cuda.py in make_llir(src, metadata, options, capability)\n"
    b"    171             add_external_libs(src, names, paths)\n"
    b"    172         # TritonGPU -> LLVM-IR\n"
    b"--> 173         ret = translate_triton_gpu_to_llvmir(src, capability, tma_infos, runtime.TARGET.NVVM)\n"
    b"\n"
    b"IndexError: map::at\n",
    b"IndexError: map::at\n",
)


@pytest.mark.parametrize("log", _NATIVE)
def test_a_cpp_exception_passed_on_as_a_python_error_is_never_the_programs_data(catalog, log):
    unnamed = SimpleNamespace(signatures=tuple(s for s in catalog.signatures if "map::at" not in " ".join(s.patterns)))
    (error,) = explain([log], unnamed).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and Clue.NATIVE in error.clues, error.reasons
    # The same type with a message of the program's own values stays the data's.
    (error,) = explain([b"IndexError: list index out of range\n"], unnamed).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_the_docs_list_every_clue_the_json_can_carry():
    docs = (LOGS.parents[2] / "docs" / "explain.md").read_text(encoding="utf-8")
    listed = docs.split('"clues":', 1)[1].split("]", 1)[0]
    assert sorted(listed.replace("\n", " ").strip(" [").replace('"', "").split(" | ")) == sorted(c.value for c in Clue)
