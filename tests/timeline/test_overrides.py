"""A package calling a method on its own object that an override refuses (compat/timeline/overrides.py), answered
from the shipped index: the package's release makes the call, the override was written for its other releases."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from compat.report.explain import api_text
from compat.timeline.links import ApiSource
from compat.timeline.records import Drift, Span
from tests.explain.test_explain import _facts
from tests.support.paths import LOGS, ROOT

API_LOGS = LOGS / "api"


def _answer(catalog, text: str, facts=None):
    (error,) = explain([text.encode()], catalog, facts, api=ApiSource()).errors
    return error


@pytest.mark.parametrize("log", [
    # urchade/GLiNER#208: GLiNER's subclass is itself named `Trainer`; the maintainer: downgrade transformers to 4.45.0.
    "override-training-step.log",
    # OpenBMB/MiniCPM-V#698: MiniCPM-V's CPMTrainer, "recently appeared" with transformers 4.46.
    "override-cpm-training-step.log",
])
def test_an_override_refusing_the_call_its_base_package_makes_names_the_older_base(catalog, log: str) -> None:
    error = _answer(catalog, (API_LOGS / log).read_text())
    a = error.api
    assert a is not None and error.verdict is ErrorVerdict.KNOWN
    assert (a.drift, a.package, a.key, a.added_in) == (Drift.OVERRIDE, "transformers", "transformers:Trainer.training_step", "4.46.0")
    assert a.fix == ("transformers<4.46.0",)  # never the newer transformers that makes the call
    assert "or change the override to take the call" in api_text(a)[-1]
    if log == "override-training-step.log":  # the page shows this answer as it is rendered
        page = (ROOT / "docs" / "api-drift.md").read_text(encoding="utf-8")
        assert all(f"   {line}\n" in page for line in api_text(a))


def test_a_keyword_the_override_lacks_is_read_from_the_base_methods_parameters(catalog) -> None:
    # The issue's own question: which transformers releases' Trainer.compute_loss take num_items_in_batch (4.46.0 on),
    # asked by an override written before them (huggingface/transformers#36331).
    text = ('  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 3612, in training_step\n'
            "    loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)\n"
            "TypeError: CustomTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'\n")
    a = _answer(catalog, text).api
    assert a is not None and (a.drift, a.key, a.fix) == (Drift.OVERRIDE, "transformers:Trainer.compute_loss", ("transformers<4.46.0",))
    assert a.present[-1] == Span(first="4.46.0", last=a.present[-1].last)


def test_an_installed_package_that_does_not_make_the_call_answers_for_the_environment_that_ran_the_log(catalog) -> None:
    # transformers 4.45.2 does not make the call the log shows: the log comes from another environment, which the
    # log alone speaks for.
    a = _answer(catalog, (API_LOGS / "override-cpm-training-step.log").read_text(), _facts({"transformers": "4.45.2"})).api
    assert a is not None and (a.drift, a.fix, a.elsewhere) == (Drift.OVERRIDE, ("transformers<4.46.0",), "4.45.2")
    alone = _answer(catalog, (API_LOGS / "override-cpm-training-step.log").read_text()).api
    assert alone is not None and (alone.drift, alone.fix, alone.elsewhere) == (Drift.OVERRIDE, ("transformers<4.46.0",), None)


def test_an_override_of_another_indexed_package_answers_for_itself(catalog) -> None:
    # trl's DPOTrainer.log under transformers' `self.log(logs, start_time)`: the index reads trl's own method, which
    # says which trl releases take the call (huggingface/trl#2445's message, docs/api-drift.md).
    text = ('  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 2600, in _maybe_log_save_evaluate\n'
            "    self.log(logs, start_time)\n"
            "TypeError: DPOTrainer.log() takes 2 positional arguments but 3 were given\n")
    a = _answer(catalog, text).api
    assert a is not None and a.package == "trl" and a.drift is Drift.CALLEE_TOO_OLD


def test_a_call_on_another_object_is_not_an_override() -> None:
    from compat.explain.drift import question
    from compat.explain.roots import Frame, Raised

    frame = Frame(file="/x/site-packages/transformers/trainer.py", line=1, function="f", package="transformers",
                  code="loss = model.training_step(model, inputs, n)")
    q = question(Raised(type="TypeError", message="Trainer.training_step() takes 3 positional arguments but 4 were given",
                        frames=(frame,), line=1))
    assert q is not None and q.override_in is None
    q = question(Raised(type="TypeError", message="Trainer.training_step() takes 3 positional arguments but 4 were given",
                        frames=(Frame(file=frame.file, line=1, function="f", package="transformers",
                                      code="x = self.training_step(model, inputs, n)"),), line=1))
    assert q is not None and q.override_in == "transformers.trainer"


@pytest.mark.parametrize(("text", "cls"), [
    # QuixiAI/grokadamw#7: the script's own logger prints the message alone, without its type or a frame.
    ("ERROR - ❌ Training failed: CustomTrainer.training_step() takes 3 positional arguments but 4 were given\n",
     "CustomTrainer"),
    # OpenBMB/MiniCPM-V#698's title, the line an issue's title carries.
    ("[BUG] <title>TypeError: CPMTrainer.training_step() takes 3 positional arguments but 4 were given\n", "CPMTrainer"),
    ("TypeError: Qwen2VLGRPOVLLMTrainer.training_step() got an unexpected keyword argument 'num_items_in_batch'\n",
     "Qwen2VLGRPOVLLMTrainer"),
])
def test_without_a_frame_the_class_is_an_override_of_the_indexed_base_its_name_ends_with(catalog, text: str, cls: str) -> None:
    error = _answer(catalog, text)
    a = error.api
    assert a is not None and error.verdict is ErrorVerdict.KNOWN
    assert (a.drift, a.key, a.fix) == (Drift.OVERRIDE, "transformers:Trainer.training_step", ("transformers<4.46.0",))
    assert f"the override `{cls}.training_step` refuses it" in " ".join(api_text(a))


@pytest.mark.parametrize("text", [
    "TypeError: CustomTrainer.__init__() got an unexpected keyword argument 'tokenizer'\n",  # its own fields
    "TypeError: CustomTrainer.make_batches() takes 2 positional arguments but 3 were given\n",  # no base has it
    "TypeError: Foo.bar() got an unexpected keyword argument 'x'\n",
])
def test_a_frameless_call_with_no_indexed_base_method_answers_nothing(catalog, text: str) -> None:
    a = _answer(catalog, text).api
    assert a is None or a.drift is not Drift.OVERRIDE
