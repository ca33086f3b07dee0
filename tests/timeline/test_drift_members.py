"""explain answers member and call-shape errors from the shipped API timeline (read from the real
wheels): a member added or removed, an unexpected keyword, a missing required argument, too many
positional arguments. The message lines are from public threads (named per test); torch.nn's
parallel wrappers are a launch mistake, never API drift."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from compat.explain.drift import question
from compat.explain.match import explain
from compat.explain.roots import Raised
from compat.explain.verdict import ErrorVerdict
from compat.model.unknown import Unknown
from compat.report.explain import render_text
from compat.timeline.drift import answer
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiKind, Drift, Missing, Span
from tests.explain.test_explain import _facts
from tests.support.paths import LOGS

API_LOGS = LOGS / "api"


@pytest.fixture(scope="module")
def shipped():
    return ApiSource()


def _run(catalog, name, facts, source, *deleted):
    kept = SimpleNamespace(signatures=tuple(s for s in catalog.signatures if s.id not in deleted))
    return explain([(API_LOGS / name).read_bytes()], kept, facts, api=source)


def test_too_many_positional_arguments_names_the_release_that_added_the_parameter(catalog, shipped):
    # huggingface/trl#2445: trl 0.12.1 with transformers 4.47.0, whose Trainer calls self.log(logs, start_time)
    result = _run(catalog, "trl-dpo-log-positional.log", _facts({"trl": "0.12.1", "transformers": "4.47.0"}), shipped)
    (error,) = result.errors
    a = error.api
    assert a is not None and a.question.missing is Missing.POSITIONAL_COUNT and a.question.caller == "transformers"
    assert (a.package, a.kind, a.key) == ("trl", ApiKind.SIGNATURE, "trl:DPOTrainer.log")
    assert (a.drift, a.added_in, a.fix) == (Drift.CALLEE_TOO_OLD, "0.13.0", ("trl>=0.13.0", "transformers<4.47.0"))
    assert a.caller_since == "4.47.0"  # transformers' own Trainer.log took start_time from 4.47.0
    assert error.verdict is ErrorVerdict.KNOWN
    assert "your trl 0.12.1 does not have a `trl:DPOTrainer.log` that takes 3 positional arguments yet (added in 0.13.0" in render_text(result)
    assert "or transformers<4.47.0 (transformers releases from before it made this call)" in render_text(result)


def test_a_missing_required_argument_is_read_from_the_signatures(catalog, shipped):
    # huggingface/trl#2613: the PPOTrainer(config, model, ref_model, tokenizer) of trl <= 0.11 on a newer trl
    result = _run(catalog, "trl-ppo-required-positional.log", _facts({"trl": "0.13.0"}), shipped)
    a = result.errors[0].api
    assert a is not None and a.question.missing is Missing.POSITIONAL and a.question.name == "reward_model"
    assert (a.kind, a.key, a.drift, a.removed_in, a.fix) == (
        ApiKind.SIGNATURE, "trl:PPOTrainer", Drift.CALLEE_TOO_NEW, "0.12.0", ("trl<0.12.0",))
    assert a.present[-1].last == "0.11.4"


def test_an_unexpected_keyword_in_the_caller_package_frame(catalog, shipped):
    # dstackai/dstack#1851: trl's SFTTrainer passes processing_class= to a transformers Trainer older than 4.46
    env = _facts({"trl": "0.12.0", "transformers": "4.45.2"})
    result = _run(catalog, "trl-processing-class-keyword.log", env, shipped, "trl-tokenizer-to-processing-class")
    a = result.errors[0].api
    assert a is not None and a.question.caller == "trl"
    assert (a.key, a.drift, a.added_in, a.fix) == (
        "transformers:Trainer(processing_class)", Drift.CALLEE_TOO_OLD, "4.46.0", ("transformers>=4.46.0",))


def test_a_version_the_facts_give_is_never_answered_with_a_floor_it_exceeds(shipped):
    q = question(Raised(type="TypeError", message="DPOTrainer.log() takes 2 positional arguments but 3 were given", frames=(), line=1))
    assert q is not None
    a = answer(q, _facts({"trl": "0.13.0"}), shipped)
    assert a is not None and a.drift is Drift.INSTALLED_HAS and a.fix == ()
    a = answer(q, None, shipped, {"trl": "0.12.1"})  # stated in the log, no facts
    assert a is not None and a.fix == ("trl>=0.13.0",)


def test_a_member_of_a_class_with_all_bases_read(shipped):
    api = shipped.get("trl")
    assert api.present(ApiKind.MEMBER, "trl:DPOTrainer.log")[0] == Span(first="0.5.0", last="1.16.0")
    q = question(Raised(type="AttributeError", message="'DPOConfig' object has no attribute 'no_such_field'", frames=(), line=1))
    assert q is not None and q.missing is Missing.MEMBER and q.module == "DPOConfig"
    a = answer(q, None, shipped)
    # DPOConfig's base is private to trl (or, in older releases, transformers' TrainingArguments): members not read
    assert a is not None and a.drift is Drift.UNDECIDED and "trl:DPOConfig inherits from" in (a.reason or "")


def test_a_parallel_wrapper_attribute_is_a_launch_mistake_not_drift(catalog, shipped):
    # 'DataParallel' object has no attribute 'config': huggingface/trl#3063, #3225
    raised = Raised(type="AttributeError", message="'DataParallel' object has no attribute 'config'", frames=(), line=1)
    assert question(raised) is None
    for wrapper in ("DistributedDataParallel", "FullyShardedDataParallel", "FSDPQwen2ForCausalLM"):
        assert question(Raised(type="AttributeError", message=f"'{wrapper}' object has no attribute 'generate'", frames=(), line=1)) is None
    result = _run(catalog, "../model-attribute-read-through-parallel-wrapper.log", _facts({"trl": "0.19.0", "transformers": "4.53.0"}), shipped)
    assert len(result.errors) == 4  # config through DataParallel (twice worded), DDP's config, DataParallel's generate
    for error in result.errors:
        assert error.api is None and error.verdict is ErrorVerdict.KNOWN_USAGE
        assert "model-attribute-read-through-parallel-wrapper" in error.signatures


def test_matrix_api_answers_a_member_and_its_signatures_from_the_real_wheels(cli):
    # Read by hand from the wheels: Trainer.compute_loss(self, model, inputs, return_outputs=False,
    # num_items_in_batch=None) in transformers 4.57.1 and 5.0.0; num_items_in_batch since 4.46.0
    # (4.36.0 and 4.45.2: `compute_loss(self, model, inputs, return_outputs=False)`).
    code, out = cli("matrix", "api", "transformers", "Trainer.compute_loss")
    lines = out.splitlines()
    assert code == 0 and lines[1] == "transformers:Trainer.compute_loss  [member]: 4.36.0 .. 5.24.0"
    assert "  (members are indexed from 4.36.0 on: older releases are not read for them)" in lines
    assert "  (model, inputs, return_outputs=)  4.36.0 .. 4.45.2" in lines
    assert "  (model, inputs, return_outputs=, num_items_in_batch=)  4.46.0 .. 5.24.0" in lines
    code, out = cli("matrix", "api", "transformers", "Trainer.compute_loss(num_items_in_batch)", "--json")
    doc = json.loads(out)
    assert doc["kind"] == "param" and doc["present"] == [{"first": "4.46.0", "last": "5.24.0"}]
    assert [s["signature"] for s in doc["signatures"]] == [
        "model, inputs, return_outputs=", "model, inputs, return_outputs=, num_items_in_batch="]
    assert doc["signatures"][0]["present"] == [{"first": "4.36.0", "last": "4.45.2"}]


def test_real_wheel_facts_about_trainer_members(shipped):
    api = shipped.get("transformers")
    # transformers 4.57.1's Trainer has the deprecated `tokenizer` property; 5.0.0's has none
    assert api.has(ApiKind.MEMBER, "transformers:Trainer.tokenizer", "4.57.1") is True
    assert api.has(ApiKind.MEMBER, "transformers:Trainer.tokenizer", "5.0.0") is False
    # Trainer.log(self, logs, start_time=None) in both
    assert api.has(ApiKind.SIGNATURE, "transformers:Trainer.log[logs,start_time=]", "4.57.1") is True
    assert api.has(ApiKind.SIGNATURE, "transformers:Trainer.log[logs,start_time=]", "5.0.0") is True
    # 4.45.2's Trainer.__init__ sets `self.tokenizer = tokenizer`; members before the first
    # backfilled release (4.36.0) are unknown, not absent
    assert api.has(ApiKind.MEMBER, "transformers:Trainer.tokenizer", "4.45.2") is True
    assert isinstance(api.has(ApiKind.MEMBER, "transformers:Trainer.tokenizer", "4.35.2"), Unknown)


def test_a_member_removed_from_the_callee_names_the_release(catalog, shipped):
    # vllm-project/llm-compressor#1895: "'Trainer' object has no attribute 'tokenizer'" on transformers 5
    result = _run(catalog, "trainer-tokenizer-attribute.log", _facts({"transformers": "5.0.0"}), shipped)
    a = result.errors[0].api
    assert a is not None and a.question.missing is Missing.MEMBER
    assert (a.key, a.drift, a.removed_in, a.fix) == (
        "transformers:Trainer.tokenizer", Drift.CALLEE_TOO_NEW, "5.0.0", ("transformers<5.0.0",))
    assert result.errors[0].verdict is ErrorVerdict.KNOWN
    assert "api: your transformers 5.0.0 no longer has `transformers:Trainer.tokenizer` (removed in 5.0.0" in render_text(result)
