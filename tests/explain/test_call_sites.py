"""A call's TypeError that names no class (`__init__() got an unexpected keyword argument 'x'`, as Pythons before 3.10
print it) asks the API timeline what the named wording asks, its callee read from the call site's source line
(compat/explain/drift.py, _callees): proved on real lines of public threads (tests/data/logs/classes/
call-names-no-class.log, each block with its thread); the user's own callees ask nothing."""

from __future__ import annotations

import pytest

from compat.explain.drift import questions
from compat.explain.match import explain
from compat.explain.roots import Frame, Raised
from compat.explain.verdict import ErrorVerdict
from compat.timeline.drift import answer
from compat.timeline.links import ApiSource
from compat.timeline.records import Drift
from tests.explain.test_unwritten_classes import CLASSES, _blocks

_BLOCKS = dict(_blocks(CLASSES / "call-names-no-class.log"))


def _block(thread: str) -> str:
    return next(text for name, text in _BLOCKS.items() if name.split(" ")[0] == thread)


@pytest.mark.parametrize(("thread", "key", "caller", "fix"), [
    ("instructlab/instructlab#2542", "accelerate:Accelerator(dispatch_batches)", "transformers", "accelerate>=0.5.0,<1.0.0"),
    ("vllm-project/vllm#548", "vllm:EngineArgs(trust_remote_code)", None, "vllm>=0.1.3"),
])
def test_a_class_called_on_the_raising_line_is_the_callee(catalog, thread, key, caller, fix):
    (error,) = [e for e in explain([_block(thread)], catalog).errors if not e.wrapper]
    assert error.api is not None and error.api.key == key, error.api
    assert error.api.caller == caller and fix in error.api.fix
    assert error.verdict is ErrorVerdict.KNOWN


@pytest.mark.parametrize("thread", ["bollossom/GAC#3", "A-Stangeland/SolarDetection#8", "shengliu66/SOP#6"])
def test_the_users_own_callee_asks_nothing(catalog, thread):
    (error,) = explain([_block(thread)], catalog).errors
    assert error.api is None and error.verdict is ErrorVerdict.NOT_ENVIRONMENT, (error.api, error.verdict)


def test_a_super_call_outside_any_package_asks_nothing(catalog):
    (error,) = explain([_block("easton-cau/SOTR#7")], catalog).errors
    assert error.api is None and error.root.code is None


@pytest.mark.parametrize("message", [
    "<lambda>() got an unexpected keyword argument 'completions'",
    "__init__() missing 1 required positional argument: 'config'",
])
def test_the_other_wordings_read_the_same_call_site(message):
    frame = Frame(file="/home/me/train.py", line=3, function="main", package=None, code="trainer = GRPOTrainer(model, cfg)")
    (q,) = questions(Raised(type="TypeError", message=message, frames=(frame,), line=4))
    assert q.module == ("<lambda>" if message.startswith("<") else "GRPOTrainer.__init__")


def test_the_innermost_call_of_a_line_is_asked_first():
    # An argument's constructor runs before the call it is passed to: the innermost class is asked first.
    raised = Raised(type="TypeError", message="__init__() got an unexpected keyword argument 'worker_use_ray'", frames=(),
                    line=2, code="engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))")
    assert [q.module for q in questions(raised)] == ["AsyncEngineArgs.__init__"]


def test_a_paste_cut_to_the_call_site_keeps_its_line(catalog):
    # zai-org/GLM-4#712's lines (vllm 0.7 removed worker_use_ray), with the older Pythons' wording and its frame line
    # cut, as pastes of the error alone show it: the code line and the carets of Python 3.11 above the exception.
    text = ("INFO 02-13 10:10:48 __init__.py:190] Automatically detected platform cuda.\n"
            "    engine_args = AsyncEngineArgs(\n                  ^^^^^^^^^^^^^^^^\n"
            "TypeError: __init__() got an unexpected keyword argument 'worker_use_ray'\n")
    (error,) = explain([text], catalog).errors
    assert error.root.code == "engine_args = AsyncEngineArgs("
    assert error.api is not None and error.api.key == "vllm:AsyncEngineArgs(worker_use_ray)"
    assert error.api.drift is Drift.CALLEE_TOO_NEW and error.verdict is ErrorVerdict.KNOWN


def test_an_unindented_line_above_is_not_a_call_site(catalog):
    text = "Loading AsyncEngineArgs(model)\nTypeError: __init__() got an unexpected keyword argument 'worker_use_ray'\n"
    (error,) = explain([text], catalog).errors
    assert error.root.code is None and error.api is None


def test_super_init_in_a_packages_file_asks_the_base_the_index_records():
    # huggingface/trl#2207's error (trl 0.12.0.dev0 with transformers 4.45.2) in the wording of the Pythons before 3.10:
    # trl's trainer passes processing_class, which transformers' Trainer takes from 4.46, to its base.
    frame = Frame(file="/opt/conda/lib/python3.9/site-packages/trl/trainer/grpo_trainer.py", line=269, function="__init__",
                  package="trl", code="super().__init__(")
    raised = Raised(type="TypeError", message="__init__() got an unexpected keyword argument 'processing_class'",
                    frames=(frame,), line=3)
    (q,) = questions(raised)
    assert q.base_of == "trl.trainer.grpo_trainer" and q.caller == "trl"
    a = answer(q, None, ApiSource(), {"transformers": "4.45.2"})
    assert a is not None and a.key == "transformers:Trainer(processing_class)" and a.caller == "trl"
    assert a.drift is Drift.CALLEE_TOO_OLD and a.fix[0] == "transformers>=4.46.0"


@pytest.mark.parametrize("line", ["super().__init__(", "self.model.generate(**inputs)"])
def test_a_call_whose_class_the_line_does_not_name_asks_nothing_decided(line):
    # In the user's file a super() call's class is the user's; a method of an instance names no class.
    frame = Frame(file="/home/me/train.py", line=3, function="__init__", package=None, code=line)
    raised = Raised(type="TypeError", message="__init__() got an unexpected keyword argument 'x'", frames=(frame,), line=4)
    (q,) = questions(raised)
    assert q.module == "__init__" and q.base_of is None
    assert answer(q, None, ApiSource()) is None
