"""API drift answered from the API timeline, with the curated signature for it deleted."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from compat.explain.drift import question
from compat.explain.match import explain
from compat.explain.roots import Frame, Raised
from compat.explain.verdict import ErrorVerdict
from compat.report.explain import api_text, render_json, render_text
from compat.timeline.drift import answer
from compat.timeline.homes import distribution_of
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiQuestion, Drift, ImportKind, Missing, Span
from tests.explain.test_explain import _facts
from tests.support.paths import LOGS
from tests.timeline.api_fixture import write_index

API_LOGS = LOGS / "api"


@pytest.fixture
def source(tmp_path):
    return ApiSource((write_index(tmp_path),))


def _without(catalog, *ids):
    return SimpleNamespace(signatures=tuple(s for s in catalog.signatures if s.id not in ids))


def _run(catalog, path, facts, source, *deleted):
    return explain([path.read_bytes()], _without(catalog, *deleted), facts, api=source)


def test_a_removed_name_imported_at_top_level_names_the_removal_and_both_fixes(catalog, source):
    env = _facts({"trl": "0.7.10", "transformers": "4.39.0"})
    result = _run(catalog, API_LOGS / "trl-core-import.log", env, source, "trl-top-k-top-p-filtering-import")
    assert not result.matches
    (error,) = result.errors
    a = error.api
    assert a is not None and error.verdict is ErrorVerdict.KNOWN and result.known
    assert (a.package, a.key, a.drift, a.installed, a.removed_in) == (
        "transformers", "transformers:top_k_top_p_filtering", Drift.CALLEE_TOO_NEW, "4.39.0", "4.39.0")
    assert a.present == (Span(first="4.36.2", last="4.38.2"),)
    assert (a.caller, a.caller_installed, a.caller_import, a.caller_fixed_in) == ("trl", "0.7.10", ImportKind.TOP_LEVEL, "0.8.0")
    assert a.fix == ("transformers<4.39.0", "trl>=0.8.0")
    text = render_text(result)
    assert "api: your transformers 4.39.0 no longer has `transformers:top_k_top_p_filtering` (removed in 4.39.0" in text
    assert "your trl 0.7.10 imports it (top level)" in text
    assert "fix: install transformers<4.39.0, or trl>=0.8.0 (the first trl release that stopped importing it)" in text
    doc = json.loads(render_json(result))
    assert doc["known"] and doc["errors"][0]["api"]["fix"] == ["transformers<4.39.0", "trl>=0.8.0"]
    assert doc["errors"][0]["api"]["present"] == [{"first": "4.36.2", "last": "4.38.2"}]


def test_the_curated_signature_still_ranks_first(catalog, source):
    env = _facts({"trl": "0.7.10", "transformers": "4.39.0"})
    result = _run(catalog, API_LOGS / "trl-core-import.log", env, source)
    assert result.matches[0].signature.id == "trl-top-k-top-p-filtering-import"
    (error,) = result.errors
    # The class the failure belongs to comes after the entry that names it.
    assert error.signatures == ("trl-top-k-top-p-filtering-import", "import-name-missing-from-installed-package")
    assert error.api is not None


def test_without_facts_the_ranges_still_say_which_side_moved(catalog, source):
    result = _run(catalog, API_LOGS / "trl-core-import.log", None, source, "trl-top-k-top-p-filtering-import")
    a = result.errors[0].api
    assert a is not None and a.drift is Drift.CALLEE_TOO_NEW and a.installed is None
    assert a.fix == ("transformers<4.39.0", "trl>=0.8.0")
    assert "api: transformers dropped `transformers:top_k_top_p_filtering` (removed in 4.39.0" in render_text(result)


def test_an_unexpected_keyword_argument_in_a_trainer(catalog, source):
    env = _facts({"trl": "0.15.2", "transformers": "5.0.0"})
    result = _run(catalog, API_LOGS / "trainer-kwarg.log", env, source, "trl-tokenizer-to-processing-class")
    (error,) = result.errors
    a = error.api
    assert a is not None and error.verdict is ErrorVerdict.KNOWN
    assert a.question.missing is Missing.KEYWORD and a.question.caller == "trl"
    assert (a.key, a.drift, a.removed_in, a.fix) == ("transformers:Trainer(tokenizer)", Drift.CALLEE_TOO_NEW, "5.0.0", ("transformers<5.0.0",))
    assert "fix: install transformers<5.0.0" in render_text(result)


def test_invalid_choice_vllm_serve(catalog, source):
    env = _facts({"trl": "0.15.2"})
    result = _run(catalog, LOGS / "trl-vllm-serve-command-missing.log", env, source, "trl-vllm-serve-command-missing")
    (error,) = [e for e in result.errors if e.api is not None]
    a = error.api
    assert a is not None and error.verdict is ErrorVerdict.KNOWN
    assert (a.key, a.drift, a.added_in, a.fix) == ("trl vllm-serve", Drift.CALLEE_TOO_OLD, "0.17.0", ("trl>=0.17.0",))
    assert "api: your trl 0.15.2 does not have `trl vllm-serve` yet (added in 0.17.0" in render_text(result)


def test_a_name_no_release_ever_had_is_not_the_environment(catalog, source):
    result = _run(catalog, API_LOGS / "typo-import.log", _facts({"transformers": "4.46.0"}), source)
    (error,) = result.errors
    assert error.api is not None and error.api.drift is Drift.NEVER and error.api.fix == ()
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and not result.known
    assert error.api.typo_of == "transformers:AutoModelForCausalLM"
    assert ("no indexed transformers release has `transformers:AutoModelForCasualLM`; `transformers:AutoModelForCausalLM` is "
            "one slip away: a typo") in render_text(result)


def test_a_chained_module_error_is_answered_from_its_cause(catalog, source):
    env = _facts({"trl": "0.19.0", "vllm": "0.10.2"})
    result = _run(catalog, API_LOGS / "nested-module.log", env, source, "trl-vllm-guideddecodingparams")
    error = result.errors[0]
    a = error.api
    assert a is not None and a.question.missing is Missing.MODULE
    assert (a.key, a.drift, a.removed_in, a.caller_import, a.caller_fixed_in) == (
        "vllm.model_executor.guided_decoding", Drift.CALLEE_TOO_NEW, "0.10.2", ImportKind.GUARDED, "0.23.0")
    assert a.fix == ("vllm<0.10.2", "trl>=0.23.0")


def test_the_answer_never_claims_more_than_the_index(source):
    # Not indexed: the installed release is unknown to the index.
    q = question(Raised(type="ImportError", message="cannot import name 'top_k_top_p_filtering' from 'transformers'", frames=(), line=1))
    assert q is not None
    a = answer(q, _facts({"transformers": "4.40.0"}), source)
    assert a is not None and a.drift is Drift.UNDECIDED and "not indexed" in (a.reason or "")
    # Installed has it: the log is from another environment.
    a = answer(q, _facts({"transformers": "4.38.2"}), source)
    assert a is not None and a.drift is Drift.INSTALLED_HAS
    # A module the index does not know: no claim that the name never existed.
    q = question(Raised(type="ImportError", message="cannot import name 'X' from 'transformers.private'", frames=(), line=1))
    assert q is not None and answer(q, None, source).drift is Drift.UNDECIDED  # type: ignore[union-attr]
    # A package with no index: no answer at all.
    q = question(Raised(type="AttributeError", message="module 'torch' has no attribute 'compiler'", frames=(), line=1))
    assert q is not None and q.missing is Missing.ATTRIBUTE and answer(q, None, source) is None


@pytest.mark.parametrize(("message", "missing", "name", "module"), [
    ("No module named 'vllm.model_executor.x'", Missing.MODULE, "vllm.model_executor.x", "vllm.model_executor.x"),
    # An issue's title may lose the closing quote where the message ends (SCIR-HI/Med-ChatGLM#15's title: `No module named
    # 'transformers_modules`); run-llama/llama_index#14048's module, so cut.
    ("No module named 'vllm.model_executor.parallel_utils", Missing.MODULE, "vllm.model_executor.parallel_utils",
     "vllm.model_executor.parallel_utils"),
    ("GRPOTrainer.__init__() missing 1 required positional argument: 'reward_funcs'", Missing.POSITIONAL, "reward_funcs", "GRPOTrainer.__init__"),
    ("The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize this architecture.",
     Missing.MODEL_TYPE, "qwen3", "transformers"),
    ("Model architectures ['Qwen3ForCausalLM'] are not supported for now.", Missing.MODEL_TYPE, "Qwen3ForCausalLM", "vllm"),
])
def test_questions(message, missing, name, module):
    q = question(Raised(type="X", message=message, frames=(), line=1))
    assert q is not None and (q.missing, q.name, q.module) == (missing, name, module)


def test_no_question_in_other_errors():
    assert question(Raised(type="ValueError", message="No module named 'vllm'", frames=(), line=1)) is None  # not installed: not drift
    assert question(Raised(type="RuntimeError", message="CUDA error", frames=(), line=1)) is None


def test_model_types(source):
    q = question(Raised(type="ValueError", message="model type `qwen3` but Transformers does not recognize this architecture", frames=(), line=1))
    assert q is not None
    a = answer(q, _facts({"transformers": "4.46.0"}), source)
    assert a is not None and (a.drift, a.fix) == (Drift.CALLEE_TOO_OLD, ("transformers>=4.57.1",))
    frame = Frame(file="/x/site-packages/transformers/models/auto/configuration_auto.py", line=1, function="f", package="transformers")
    q = question(Raised(type="KeyError", message="'qwen3'", frames=(frame,), line=1))
    assert q is not None and q.missing is Missing.MODEL_TYPE and q.name == "qwen3"


def test_model_type_key_errors_of_the_other_auto_modules_and_of_a_cut_paste():
    # A model type transformers' auto machinery looks up, whichever auto module raised it, or, when the paste was cut
    # above transformers' frames, the line that called an auto class. henrywoo/pyllama#39 (KeyError: 'llama',
    # innermost frame tokenization_auto.py); huggingface/transformers#34161 (KeyError: 'qwen2_vl' from the line below).
    frame = Frame(file=r"D:\Python\Python3_10_8\lib\site-packages\transformers\models\auto\tokenization_auto.py", line=676,
                  function="from_pretrained", package="transformers")
    q = question(Raised(type="KeyError", message="'llama'", frames=(frame,), line=1))
    assert q is not None and (q.missing, q.name, q.module) == (Missing.MODEL_TYPE, "llama", "transformers")
    call = Frame(file="/content/run.py", line=4, function="<module>", package=None,
                 code='processor = AutoProcessor.from_pretrained("Qwen/Qwen2-VL-7B-Instruct")')
    q = question(Raised(type="KeyError", message="'qwen2_vl'", frames=(call,), line=1))
    assert q is not None and (q.missing, q.name) == (Missing.MODEL_TYPE, "qwen2_vl")
    # A KeyError on any other line of the user's code is the program's own lookup, not a model type.
    other = Frame(file="/content/run.py", line=9, function="<module>", package=None, code='row = batch["qwen2_vl"]')
    assert question(Raised(type="KeyError", message="'qwen2_vl'", frames=(other,), line=1)) is None
    # On the auto call, a key that is no model type's shape (a class, a path) asks nothing.
    assert question(Raised(type="KeyError", message="<class 'x.DetrConfig'>", frames=(call,), line=1)) is None


def test_a_key_error_in_a_package_own_table_asks_that_package_for_the_model_type(source):
    # linkedin/Liger-Kernel#1404: `apply_fn = MODEL_TYPE_TO_APPLY_LIGER_FN[model_type]` raising KeyError: 'gpt2' in
    # liger_kernel/transformers/auto_model.py: the package's own table of the model types it supports.
    liger = Frame(file="/usr/local/lib/python3.12/dist-packages/liger_kernel/transformers/auto_model.py", line=36,
                  function="from_pretrained", package="liger_kernel", code="apply_fn = MODEL_TYPE_TO_APPLY_LIGER_FN[model_type]")
    q = question(Raised(type="KeyError", message="'gpt2'", frames=(liger,), line=1))
    assert q is not None and (q.missing, q.name, q.module, q.caller) == (Missing.MODEL_TYPE, "gpt2", "liger_kernel", "liger_kernel")
    # A key of no model type's shape (a tensor name, a path) asks nothing.
    assert question(Raised(type="KeyError", message="'model.layers.0.mlp.weight'", frames=(liger,), line=1)) is None
    # A package that indexes no model types (trl here) or a key transformers does not know is a data key: no answer.
    trl = Frame(file="/x/site-packages/trl/trainer/utils.py", line=1, function="f", package="trl")
    q = question(Raised(type="KeyError", message="'qwen3'", frames=(trl,), line=1))
    assert q is not None and answer(q, None, source) is None
    q = question(Raised(type="KeyError", message="'input_ids'", frames=(trl,), line=1))
    assert q is not None and answer(q, None, source) is None


def test_positional_and_kwargs_catch_all(source):
    q = question(Raised(type="TypeError", message="Trainer.__init__() missing 1 required positional argument: 'processing_class'",
                        frames=(), line=1))
    assert q is not None
    a = answer(q, _facts({"transformers": "4.46.0"}), source)
    assert a is not None and (a.drift, a.fix) == (Drift.CALLEE_TOO_NEW, ("transformers<4.46.0",))
    q = question(Raised(type="TypeError", message="Trainer.__init__() missing 1 required positional argument: 'model'", frames=(), line=1))
    assert q is not None and answer(q, None, source).drift is Drift.UNDECIDED  # type: ignore[union-attr]
    q = question(Raised(type="TypeError", message="GRPOConfig.__init__() got an unexpected keyword argument 'use_vlm'", frames=(), line=1))
    a = answer(q, None, source)  # type: ignore[arg-type]
    assert a is not None and a.drift is Drift.UNDECIDED and "**kwargs" in (a.reason or "")
    q = question(Raised(type="TypeError", message="CustomTrainer.compute_loss() got an unexpected keyword argument 'n'", frames=(), line=1))
    assert q is not None and answer(q, None, source) is None  # the user's own class: not in any index
    q = question(Raised(type="TypeError", message="f() got an unexpected keyword argument 'x'", frames=(), line=1))
    assert q is not None and answer(q, None, source) is None  # a bare function name is too common to look up


def test_distribution_names():
    assert distribution_of("huggingface_hub") == "huggingface-hub"
    assert distribution_of("flash_attn_2_cuda") == "flash-attn"
    assert distribution_of("trl") == "trl"


def test_the_caller_is_the_innermost_file_frame():
    trl = Frame(file="/x/site-packages/trl/core.py", line=3, function="<module>", package="trl")
    frozen = Frame(file="<frozen importlib._bootstrap>", line=1204, function="_gcd_import", package=None)
    q = question(Raised(type="ImportError", message="cannot import name 'a' from 'transformers'", frames=(trl, frozen), line=1))
    assert q is not None and q.caller == "trl"
    q = question(Raised(type="ImportError", message="cannot import name 'a' from 'transformers'", frames=(frozen,), line=1))
    assert q is not None and q.caller is None


def test_a_name_the_caller_needs_from_a_newer_callee(source):
    trl = Frame(file="/x/site-packages/trl/trainer/utils.py", line=9, function="<module>", package="trl")
    q = question(Raised(type="ImportError", message="cannot import name 'EncoderDecoderCache' from 'transformers'", frames=(trl,), line=1))
    assert q is not None
    a = answer(q, _facts({"trl": "0.19.0", "transformers": "4.39.0"}), source)
    assert a is not None and (a.drift, a.added_in, a.caller_import, a.caller_since) == (
        Drift.CALLEE_TOO_OLD, "4.45.2", ImportKind.TOP_LEVEL, "0.19.0")
    assert a.fix == ("transformers>=4.45.2", "trl<0.19.0")
    assert api_text(a)[-1] == "     fix: install transformers>=4.45.2, or trl<0.19.0 (trl releases from before it started importing it)"


def test_a_config_member_read_only_from_a_later_release_is_dated_by_its_init_parameter(catalog):
    # Members are read from transformers 4.36.0 on, and every release read has MistralConfig.attention_dropout; its
    # __init__ parameter, read in every release, appears in 4.36.0 too (huggingface/transformers#27315 added it to the
    # Llama and Mistral configs) while the class is older: a transformers before 4.36.0 raised it.
    line = "AttributeError: 'MistralConfig' object has no attribute 'attention_dropout'\n"
    (a,) = [e.api for e in explain([line.encode()], catalog, None, api=ApiSource()).errors if e.api is not None]
    assert (a.drift, a.added_in, a.fix) == (Drift.CALLEE_TOO_OLD, "4.36.0", ("transformers>=4.36.0",))
    a = answer(question(Raised(type="AttributeError", message=line.strip(), frames=(), line=1)),  # type: ignore[arg-type]
               _facts({"transformers": "4.35.2"}), ApiSource())
    assert a is not None and a.drift is Drift.CALLEE_TOO_OLD and a.fix == ("transformers>=4.36.0",)
    # A parameter as old as the class dates nothing (vocab_size: tests/data/logs/negative/near-miss-2026b.log).
    line = "AttributeError: 'LlamaConfig' object has no attribute 'vocab_size'\n"
    (a,) = [e.api for e in explain([line.encode()], catalog, None, api=ApiSource()).errors if e.api is not None]
    assert a.drift is Drift.UNDECIDED


def test_a_torch_name_some_releases_define_in_python_is_decided(catalog):
    # ultralytics/ultralytics#14677: ultralytics 8.2.64 calls torch.amp.GradScaler, which torch defines in Python from
    # 2.3 on; the reporter ran torch 2.1.0 (meta-pytorch/tnt#751: the same with torch 2.2.1). The C extension may hold
    # names the index cannot see, but not this one: the releases that define it in Python decide it.
    result = _run(catalog, API_LOGS / "torch-amp-gradscaler.log", _facts({"torch": "2.1.0"}), ApiSource())
    (a,) = [e.api for e in result.errors if e.api is not None]
    assert (a.package, a.key, a.drift, a.added_in) == ("torch", "torch.amp:GradScaler", Drift.CALLEE_TOO_OLD, "2.3.0")
    assert a.fix[0] == "torch>=2.3.0" and result.known


def test_a_torch_name_is_undecided_not_a_typo(catalog):
    # torch.float8_e4m3fn comes from torch's C extension: absent from the index, yet real (transformers#32185).
    result = _run(catalog, API_LOGS / "torch-float8-attribute.log", None, ApiSource())
    answers = [e.api for e in result.errors if e.api is not None]
    assert answers and all(a.drift is Drift.UNDECIDED and "C extension" in (a.reason or "") for a in answers)


def test_a_name_that_came_back_offers_both_runs_of_releases(catalog):
    # transformers 5.0-5.3 split ALLOWED_LAYER_TYPES in two and 5.4.0 defined it again (vllm-project/vllm#31181): without
    # the installed release, either run of releases that has it is a way out, and the sentence says there are two.
    log = API_LOGS / "vllm-allowed-layer-types.log"
    alone = explain([log.read_bytes()], catalog, None, api=ApiSource())
    a = alone.errors[0].api
    assert a is not None and alone.errors[0].verdict is ErrorVerdict.KNOWN and a.drift is Drift.CALLEE_TOO_OLD
    assert [(s.first, s.last) for s in a.present[:1]] == [("4.53.0", "4.57.6")] and a.present[1].first == "5.4.0"
    assert a.fix == ("transformers>=4.53.0,<5.0.0", "transformers>=5.4.0")
    text = render_text(alone)
    assert "api: transformers has `transformers.configuration_utils:ALLOWED_LAYER_TYPES` only in 4.53.0 - 4.57.6, 5.4.0 - " in text
    assert "fix: install transformers>=4.53.0,<5.0.0, or transformers>=5.4.0" in text
    # The installed release picks the run: a 5.2 is one upgrade from the next.
    on_5_2 = explain([log.read_bytes()], catalog, _facts({"transformers": "5.2.0"}), api=ApiSource())
    a = on_5_2.errors[0].api
    assert a is not None and a.fix == ("transformers>=5.4.0",)


def test_a_class_method_named_alone_is_placed_by_its_parameter(catalog):
    # Pasted with no frame and no package in its name (modelscope/ms-swift#3338 and nunchux-ai/deepcompressor#114 for
    # the first line, FlagOpen/FlagEmbedding#1384 for the second): the class is a module's of transformers, which
    # made position_embeddings a parameter of the attention layers in 4.43 and of the decoder layers in 4.48.
    lines = (API_LOGS / "class-method-named-alone.log").read_bytes().splitlines(keepends=True)
    placed = []
    for line in lines:
        (error,) = explain([line], catalog, None, api=ApiSource()).errors
        a = error.api
        assert a is not None and error.verdict is ErrorVerdict.KNOWN
        placed.append((a.key, a.fix))
    assert placed == [
        ("transformers.models.llama.modeling_llama:LlamaAttention.forward(position_embeddings)", ("transformers<4.43.0",)),
        ("transformers.models.gemma2.modeling_gemma2:Gemma2DecoderLayer.forward(position_embeddings)", ("transformers<4.48.0",)),
    ]
    text = render_text(explain([lines[1]], catalog, None, api=ApiSource()))
    assert ("api: transformers releases from 4.48.0 require `transformers.models.gemma2.modeling_gemma2:Gemma2DecoderLayer.forward"
            "(position_embeddings)` (added in 4.48.0; present in 4.48.0 - ") in text
    assert "the calling code was written for releases before it" in text


@pytest.mark.parametrize(("param", "package"), [("positions", "vllm"), ("position_embeddings", "transformers"), ("nope", None)])
def test_a_class_two_packages_define_is_told_apart_by_the_parameter(param, package):
    # transformers and vLLM each define a LlamaAttention: vLLM's forward takes `positions`, transformers' (4.43 on)
    # `position_embeddings`; a parameter neither has places nothing.
    q = ApiQuestion(missing=Missing.KEYWORD, name=param, module="LlamaAttention.forward", caller=None)
    a = answer(q, None, ApiSource())
    assert (a.package if a is not None else None) == package
