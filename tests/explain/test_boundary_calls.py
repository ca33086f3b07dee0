"""A call refused at the boundary between a program (or one package) and an installed package is a question for the API
timeline even where the callee's class is not at the package's top level: the module path the call is written with
(`deepspeed.zero.Init(...)`), or a class of a module inside the package (`DeepSpeedZeRoOffload.get_param_coordinator()`,
compat/timeline/drift.py's `_class_home`). Also: a traceback whose first line lost its rank prefix in the paste, and a
version statement printed as a warning (no exception) with both sides."""

from __future__ import annotations

from compat.explain.drift import questions
from compat.explain.match import explain
from compat.explain.roots import Raised
from compat.explain.verdict import ErrorVerdict
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()

_INIT_CALL = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/project/pretrain.py", line 39, in model_provider\n'
    "    with deepspeed.zero.Init(sequence_data_parallel_group=mpu.get_sequence_data_parallel_group(),\n"
    "TypeError: __init__() got an unexpected keyword argument 'sequence_data_parallel_group'\n"
)


def test_the_path_a_class_is_called_with_is_asked_first() -> None:
    raised = Raised(type="TypeError", message="__init__() got an unexpected keyword argument 'x'", frames=(), line=2,
                    code="with deepspeed.zero.Init(x=group):")
    assert [q.module for q in questions(raised)] == ["deepspeed.zero.Init.__init__", "Init.__init__"]


def test_a_package_class_called_from_the_users_code_by_its_path_is_answered() -> None:
    (error,) = explain([_INIT_CALL], MATRIX).errors
    assert error.api is not None and error.api.key == "deepspeed.runtime.zero:Init(sequence_data_parallel_group)", error.api
    assert error.api.fix == ("deepspeed>=0.10.2",)
    assert error.verdict is ErrorVerdict.KNOWN


def test_a_class_inside_a_package_named_by_another_packages_call_is_answered() -> None:
    text = ('  File "/env/lib/python3.10/site-packages/badam/block_optim.py", line 306, in _reset_ds_optimizer\n'
            "[rank2]:     ds_optimizer.parameter_offload.get_param_coordinator(training=True)._invalidate_trace()\n"
            "[rank2]: TypeError: DeepSpeedZeRoOffload.get_param_coordinator() got an unexpected keyword argument 'training'\n")
    errors = [e for e in explain([text], MATRIX).errors if not e.wrapper]
    assert len(errors) == 1, errors  # the unprefixed first line is the same rank's traceback
    (error,) = errors
    assert error.root.raiser is not None and error.root.raiser.package == "badam"
    assert error.api is not None and error.api.key == "deepspeed.runtime.engine:DeepSpeedZeRoOffload.get_param_coordinator(training)"
    assert error.api.fix == ("deepspeed>=0.6.6,<0.15.4",) and error.verdict is ErrorVerdict.KNOWN


def test_a_class_no_package_names_asks_nothing() -> None:
    # The program's own class, named like no indexed package: no package's modules are searched for it.
    text = ('  File "/home/me/train.py", line 12, in main\n'
            "    net = MyResNet(num_classes=10, T=4)\n"
            "TypeError: MyResNet.__init__() got an unexpected keyword argument 'T'\n")
    (error,) = explain([text], MATRIX).errors
    assert error.api is None and error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_a_version_statement_printed_as_a_warning_is_the_error() -> None:
    # torchao 0.17's warning at import (pytorch/ao torchao/__init__.py), as sglang's documentation notebooks print it.
    text = ("    Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0 "
            "(found 2.9.1+cu130).\n")
    (error,) = explain([text], MATRIX).errors
    (stated,) = error.versions
    assert (stated.subject, stated.wanted, stated.found) == ("torch", ">=2.11.0", "2.9.1+cu130")
    assert error.verdict is ErrorVerdict.KNOWN


def _call(code: str, message: str) -> str:
    return f'Traceback (most recent call last):\n  File "/home/me/train.py", line 40, in main\n    {code}\nTypeError: {message}\n'


def test_a_distinctive_function_named_alone_is_the_one_package_that_has_it() -> None:
    text = _call("model = get_peft_model(model, config, autocast_adapter_dtype=False)",
                 "get_peft_model() got an unexpected keyword argument 'autocast_adapter_dtype'")
    (error,) = explain([text], MATRIX).errors
    assert error.api is not None and error.api.key == "peft:get_peft_model(autocast_adapter_dtype)", error.api
    assert error.api.fix == ("peft>=0.12.0",) and error.verdict is ErrorVerdict.KNOWN


def test_a_function_called_by_its_module_path_is_that_packages() -> None:
    text = _call("engine, *_ = deepspeed.initialize(model=model, mesh_param=(2, 4))",
                 "initialize() got an unexpected keyword argument 'mesh_param'")
    (error,) = explain([text], MATRIX).errors
    assert error.api is not None and error.api.key == "deepspeed:initialize(mesh_param)", error.api
    assert error.api.fix == ("deepspeed>=0.15.0",)


def test_a_common_or_shared_function_name_asks_nothing() -> None:
    # `collate_fn` is a program's own as often as a package's; prepare_model_for_kbit_training is both peft's and trl's.
    for code, message in [("batch = collate_fn(items, pad=True)", "collate_fn() got an unexpected keyword argument 'pad'"),
                          ("model = prepare_model_for_kbit_training(model, gradient_checkpointing_kwargs={})",
                           "prepare_model_for_kbit_training() got an unexpected keyword argument 'gradient_checkpointing_kwargs'")]:
        (error,) = explain([_call(code, message)], MATRIX).errors
        assert error.api is None and error.verdict is ErrorVerdict.NOT_ENVIRONMENT, (code, error.api)


def test_a_parameter_gone_where_the_callable_takes_any_keyword_is_not_a_removal() -> None:
    # vLLM 0.5.5 made SamplingParams a msgspec Struct: the index stores "**" for it from then on, so a field last read
    # in 0.5.4 was not removed in 0.5.5 as far as the index knows; the call's verdict stays the environment's suspect.
    text = _call("sampling_params = SamplingParams(**params_dict)",
                 "__init__() got an unexpected keyword argument 'use_beam_search'")
    (error,) = explain([text], MATRIX).errors
    assert error.api is not None and error.api.key == "vllm:SamplingParams(use_beam_search)"
    assert not error.api.decided and error.api.fix == () and "**kwargs" in (error.api.reason or "")
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT
    assert any("the call goes into vllm's" in r for r in error.reasons), error.reasons


def test_msgspecs_wording_asks_about_the_struct_built_on_the_line() -> None:
    raised = Raised(type="TypeError", message="Unexpected keyword argument 'use_beam_search'", frames=(), line=2,
                    code="sampling_params = SamplingParams(**params_dict)")
    assert [(q.module, q.name) for q in questions(raised)] == [("SamplingParams.__init__", "use_beam_search")]
