"""The shipped index's members and signatures against facts read by hand from the real wheels.

Each fact below was checked by reading the named module of the release's wheel (the source text, not
compat's extraction), so a backfill that reads a release wrongly, or a release range that stops short
of what docs/api-index.md says is indexed, fails here. One test per package with members backfilled.
"""

from __future__ import annotations

import pytest

from compat.model.unknown import Unknown
from compat.timeline.index import PackageApi, load_api, signatures_of
from compat.timeline.records import ApiKind


def _shipped(package: str) -> PackageApi:
    api = load_api(package)
    assert not isinstance(api, Unknown), api
    return api


def test_transformers_compute_loss_takes_num_items_in_batch_from_4_46_and_older_releases_say_so() -> None:
    api = _shipped("transformers")
    # transformers/trainer.py: `def compute_loss(self, model, inputs, return_outputs=False):` in 4.36.0
    # and 4.45.2; `..., return_outputs=False, num_items_in_batch=None):` in 4.46.0.
    old = "transformers:Trainer.compute_loss[model,inputs,return_outputs=]"
    new = "transformers:Trainer.compute_loss[model,inputs,return_outputs=,num_items_in_batch=]"
    for release in ("4.36.0", "4.45.2"):
        assert api.has(ApiKind.MEMBER, "transformers:Trainer.compute_loss", release) is True
        assert api.has(ApiKind.SIGNATURE, old, release) is True
        assert api.has(ApiKind.SIGNATURE, new, release) is False
    assert api.has(ApiKind.SIGNATURE, old, "4.46.0") is False
    assert api.has(ApiKind.SIGNATURE, new, "4.46.0") is True
    # transformers/training_args.py: the field `eval_strategy` first appears in 4.41.0 (4.40.2 has
    # only `evaluation_strategy`, which 4.41.0 .. 4.46.0 keep beside it).
    assert api.has(ApiKind.MEMBER, "transformers:TrainingArguments.eval_strategy", "4.40.2") is False
    assert api.has(ApiKind.MEMBER, "transformers:TrainingArguments.eval_strategy", "4.41.0") is True
    assert api.has(ApiKind.MEMBER, "transformers:TrainingArguments.evaluation_strategy", "4.45.2") is True
    # `self.tokenizer = tokenizer` in Trainer.__init__ of 4.36.0: an attribute member
    assert api.has(ApiKind.MEMBER, "transformers:Trainer.tokenizer", "4.36.0") is True
    # the backfill stopped at 4.36.0: older releases are not read for members
    assert isinstance(api.has(ApiKind.MEMBER, "transformers:Trainer.compute_loss", "4.35.2"), Unknown)


@pytest.mark.parametrize(("release", "has_it"), [("0.6.2", False), ("0.6.3", True), ("0.11.2", True), ("0.12.0", False)])
def test_vllm_sampling_params_guided_decoding_from_0_6_3_to_0_11(release: str, has_it: bool) -> None:
    # vllm/sampling_params.py: the msgspec field `guided_decoding: Optional[GuidedDecodingParams] = None`
    # is absent from 0.6.2 and present from 0.6.3; 0.11.2 keeps it beside `structured_outputs`, 0.12.0
    # has only `structured_outputs` (the removal behind huggingface/trl#4617).
    api = _shipped("vllm")
    assert api.has(ApiKind.MEMBER, "vllm:SamplingParams.guided_decoding", release) is has_it


def test_vllm_llm_init_keywords_read_from_the_wheels() -> None:
    api = _shipped("vllm")
    # vllm/entrypoints/llm.py, LLM.__init__: `max_context_len_to_capture: Optional[int] = None` up to
    # 0.6.3.post1, gone in 0.6.4; from 0.9.1 every parameter after `model` is keyword-only (`model: str, *,`).
    assert api.has(ApiKind.PARAM, "vllm:LLM(max_context_len_to_capture)", "0.6.3.post1") is True
    assert api.has(ApiKind.PARAM, "vllm:LLM(max_context_len_to_capture)", "0.6.4") is False
    keys = [m.key for m in signatures_of(api, "vllm:LLM")]
    for release, keyword_only in (("0.9.0.1", False), ("0.9.1", True)):
        found = [k for k in keys if api.has(ApiKind.SIGNATURE, k, release) is True]
        assert len(found) == 1, (release, found)
        assert found[0].startswith("vllm:LLM[model,*,") is keyword_only
    assert isinstance(api.has(ApiKind.MEMBER, "vllm:LLM.generate", "0.5.5"), Unknown)  # not read before 0.6.0



def test_datasets_members_read_from_the_wheels() -> None:
    api = _shipped("datasets")
    # datasets/arrow_dataset.py: `def prepare_for_task(self, task, id=0)` on Dataset in 2.21.0, gone in
    # 3.0.0 (task templates removed); datasets/iterable_dataset.py: IterableDataset gains
    # `def state_dict(self)` in 2.20.0 (none in 2.19.2).
    assert api.has(ApiKind.MEMBER, "datasets:Dataset.prepare_for_task", "2.21.0") is True
    assert api.has(ApiKind.MEMBER, "datasets:Dataset.prepare_for_task", "3.0.0") is False
    assert api.has(ApiKind.MEMBER, "datasets:IterableDataset.state_dict", "2.19.2") is False
    assert api.has(ApiKind.MEMBER, "datasets:IterableDataset.state_dict", "2.20.0") is True
    assert isinstance(api.has(ApiKind.MEMBER, "datasets:Dataset.map", "2.13.2"), Unknown)  # read from 2.14.0 on


def test_deepspeed_initialize_and_engine_read_from_the_sdists() -> None:
    api = _shipped("deepspeed")
    # deepspeed/__init__.py: `def initialize(args=None, ...)` gains `distributed_port` in 0.14.1 and
    # `mesh_param=None` in 0.15.0; deepspeed/runtime/engine.py: DeepSpeedEngine gains
    # `def offload_states(self, ...)` in 0.15.2 (none in 0.15.1).
    keys = [m.key for m in signatures_of(api, "deepspeed:initialize")]
    for release, port, mesh in (("0.14.0", False, False), ("0.14.1", True, False), ("0.15.0", True, True)):
        (key,) = [k for k in keys if api.has(ApiKind.SIGNATURE, k, release) is True]
        assert (",distributed_port=," in key, ",mesh_param=," in key) == (port, mesh), (release, key)
    assert api.has(ApiKind.MEMBER, "deepspeed:DeepSpeedEngine.offload_states", "0.15.1") is False
    assert api.has(ApiKind.MEMBER, "deepspeed:DeepSpeedEngine.offload_states", "0.15.2") is True
    assert isinstance(api.has(ApiKind.MEMBER, "deepspeed:DeepSpeedEngine.backward", "0.11.2"), Unknown)  # from 0.12.0 on
