"""Classes of environment failure explain names by their structure rather than one log's wording (issue 23): each is
proved on real lines of public threads (tests/data/logs/classes/, each block with its thread), and its look-alikes
keep their verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from tests.support.paths import LOGS

CLASSES = LOGS / "classes"


def _blocks(path: Path) -> list[tuple[str, str]]:
    """(thread, lines) of each block: a `# thread` line, then the lines as posted, up to a blank line."""
    out = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = block.strip("\n").splitlines()
        if len(lines) >= 2 and lines[0].startswith("# ") and not lines[1].startswith("# "):
            out.append((lines[0][2:], "\n".join(lines[1:]) + "\n"))
    return out


def _cases(name: str) -> list:
    return [pytest.param(text, id=thread.split(" ")[0]) for thread, text in _blocks(CLASSES / f"{name}.log")]


@pytest.mark.parametrize("text", _cases("registry-refuses-model-type"))
def test_a_registry_refusing_a_model_type_transformers_registers_is_named(catalog, text):
    result = explain([text], catalog)
    (error,) = [e for e in result.errors if not e.wrapper]
    assert error.verdict is ErrorVerdict.KNOWN, error.reasons
    assert error.api is not None and error.api.package == "transformers" and error.api.added_in


@pytest.mark.parametrize("line", [
    # hiyouga/LlamaFactory#7894's title: a chat template's registry; its names are not model types, so one that is
    # (qwen3) says nothing about transformers.
    "ValueError: Template qwen3 does not exist.\n",
    # modelscope/ms-swift#2676's title: a name no transformers release registers asks nothing.
    "ValueError: model_type: 'internvl2_5-38b' is not registered.\n",
    # The names a registry lists as accepted are not the refused one.
    "ValueError: model_type: 'my_model' not in ['qwen2_vl', 'qwen2_5_vl']\n",
])
def test_a_refusal_that_names_no_registered_model_type_asks_nothing(catalog, line):
    (error,) = explain([line], catalog).errors
    assert error.api is None and error.verdict is not ErrorVerdict.KNOWN


def test_a_model_type_refused_in_the_users_own_code_is_not_asked(catalog):
    text = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 12, in <module>\n'
            '    raise ValueError(f"Model type {mt} not supported")\nValueError: Model type qwen2_5_vl not supported\n')
    (error,) = explain([text], catalog).errors
    assert error.api is None and error.verdict is ErrorVerdict.NOT_ENVIRONMENT


@pytest.mark.parametrize("text", _cases("loader-message-without-its-type"))
def test_a_loader_message_without_its_type_is_the_import_error_it_reports(catalog, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert "flash-attn-abi-undefined-symbol" in [m.signature.id for m in result.matches]
    assert [e.root.type for e in result.errors] == ["ImportError"]


def test_a_loader_message_quoted_in_code_is_not_an_error(catalog):
    # A source line a paste shows is not a report.
    text = '    raise ImportError(f"{path}.so: undefined symbol: {name}")\n'
    assert explain([text], catalog).errors == ()


@pytest.mark.parametrize("text", _cases("name-undefined-printed-alone"))
def test_a_name_error_printed_with_no_frame_is_a_packages(catalog, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert [m.signature.id for m in result.matches] == ["name-undefined-in-package-code"]


def test_a_name_error_in_the_users_own_frame_stays_the_users(catalog):
    text = ('Traceback (most recent call last):\n  File "/home/me/notebook.py", line 4, in <module>\n'
            "    trainer.train()\nNameError: name 'trainer' is not defined\n")
    result = explain([text], catalog)
    assert result.matches == () and result.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_the_message_alone_without_its_type_is_not_taken_for_a_packages(catalog):
    # somewheresy/S2ML-Generators#12's title: a notebook cell run before the cell that imports torch (the user's
    # slip). Without `NameError:` nothing says the interpreter raised it, so the class does not fire.
    result = explain(["name 'torch' is not defined\n"], catalog)
    assert result.matches == () and result.verdict is not ErrorVerdict.KNOWN


@pytest.mark.parametrize("text", _cases("dependency-gate-cut"))
def test_a_traceback_cut_inside_a_dependency_gate_is_named(catalog, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert result.matches[0].signature.id == "dependency-version-gate-failed"


def test_a_function_that_only_sounds_like_a_gate_is_not_one(catalog):
    text = ('Traceback (most recent call last):\n  File "/home/me/prep.py", line 9, in check_versions_of_data\n'
            "    raise ValueError(row)\nValueError: 3\n")
    assert "dependency-version-gate-failed" not in [m.signature.id for m in explain([text], catalog).matches]


@pytest.mark.parametrize("text", _cases("torch-submodule-missing"))
def test_a_torch_submodule_missing_is_answered_from_the_wheels_files(catalog, text):
    (error,) = explain([text], catalog).errors
    assert error.verdict is ErrorVerdict.KNOWN, error.reasons
    assert error.api is not None and error.api.package == "torch" and error.api.added_in is not None


def test_a_torch_name_of_its_c_extension_stays_undecided(catalog):
    (error,) = explain(["AttributeError: module 'torch' has no attribute 'float8_e4m3fn'\n"], catalog).errors
    assert error.api is not None and not error.api.decided
    # What names it, if anything, is the catalog (a library asking for a dtype newer than the torch), never the index.
    assert all(r.startswith("the catalog's ") for r in error.reasons) or error.verdict is not ErrorVerdict.KNOWN


@pytest.mark.parametrize("text", _cases("interleaved-ranks"))
def test_ranks_printing_one_exception_at_once_are_read_as_that_exception(catalog, text):
    (error,) = explain([text], catalog).errors
    assert error.root.type == "RuntimeError" and error.root.message.startswith("RuntimeErrorIn operator()")


def test_an_interleaved_data_error_keeps_the_verdict_of_its_type(catalog):
    # Two ranks' `KeyError: 'input_ids_j'`: `KeyErrorKeyError` is no type, and read as one it spoke of nothing.
    text = '    "input_ids": feature["input_ids_j"],    "input_ids": feature["input_ids_j"],\n\nKeyErrorKeyError: : \'input_ids_j\'\n'
    (error,) = explain([text], catalog).errors
    assert error.root.type == "KeyError" and error.root.message == "'input_ids_j'"
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


@pytest.mark.parametrize("text", _cases("package-imported-from-source-tree"))
def test_a_package_imported_from_a_source_tree_is_a_launch_mistake(catalog, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN_USAGE, [e.reasons for e in result.errors]
    assert "package-imported-from-source-tree" in {m.signature.id for m in result.matches}


@pytest.mark.parametrize("line", [
    # OpenRLHF/OpenRLHF#1001: deepspeed's own circular import, in dist-packages: a release's bug, not where it ran.
    "(TemporaryActor pid=6490) ImportError: cannot import name 'DeepSpeedTransformerInference' from partially initialized"
    " module 'deepspeed.model_implementations.transformers.ds_transformer' (most likely due to a circular import)"
    " (/usr/local/lib/python3.10/dist-packages/deepspeed/model_implementations/transformers/ds_transformer.py)\n",
    # The same wording from a site-packages install, on Windows.
    "ImportError: cannot import name 'dependency_versions_check' from partially initialized module 'transformers'"
    " (most likely due to a circular import) (D:\\ApplioRVC\\env\\lib\\site-packages\\transformers\\__init__.py)\n",
    # A compiled name missing from an installed package, with no partial import in the log: a release mismatch.
    "ImportError: cannot import name '_C' from 'flash_attn' (/usr/lib/python3/dist-packages/flash_attn/__init__.py)\n",
    "ImportError: cannot import name 'activation_ops' from 'vllm'\n",
])
def test_an_installed_package_failing_its_own_import_is_not_a_launch_mistake(catalog, line):
    result = explain([line], catalog)
    assert "package-imported-from-source-tree" not in {m.signature.id for m in result.matches}
    assert result.verdict is not ErrorVerdict.KNOWN_USAGE


def test_a_tokenizer_library_keeps_its_own_entry(catalog):
    # huggingface/transformers' tokenizer guard: the entry for sentencepiece/protobuf/tiktoken says more than the class.
    line = ("ImportError: LlamaTokenizer requires the SentencePiece library but it was not found in your environment."
            " Checkout the instructions on the\n")
    result = explain([line], catalog)
    assert result.matches[0].signature.id != "library-requires-backend-not-installed"
    assert result.verdict is ErrorVerdict.KNOWN


def test_accelerates_older_wording_of_a_missing_package_is_named(catalog):
    # hiyouga/LlamaFactory#4694: accelerate's check before it said "is not installed".
    line = "ImportError: DeepSpeed is not available => install it using `pip3 install deepspeed` or build it from source\n"
    result = explain([line], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert "stack-package-not-installed" in {m.signature.id for m in result.matches}
    # "not available" alone is a feature's, not a package's ("CUDA is not available", "UVA is not available").
    assert "stack-package-not-installed" not in {m.signature.id for m in explain(["RuntimeError: DeepSpeed is not available on this platform\n"], catalog).matches}


NAMED_BY_AN_ENTRY = ("vllm-rope-scaling-without-factor", "library-requires-backend-not-installed",
                     "llamafactory-processor-not-loaded", "torch-fx-graph-pass-erased-used-node")
"""Classes named by one catalog entry, each proved on its file of real lines under tests/data/logs/classes/."""


@pytest.mark.parametrize(("entry", "text"), [
    pytest.param(entry, *case.values, id=f"{entry}-{case.id}") for entry in NAMED_BY_AN_ENTRY for case in _cases(entry)])
def test_each_class_an_entry_names_is_known_on_every_thread(catalog, entry, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    assert entry in {m.signature.id for m in result.matches}


@pytest.mark.parametrize(("entry", "line"), [
    # modelscope/ms-swift#7198: swift's own check of its arguments speaks of the factor too; it is not vLLM's assert.
    ("vllm-rope-scaling-without-factor", "AssertionError: `max_model_len` or `rope_scaling_factor` is not set\n"),
    # transformers' validator of the two-field form is another entry's (transformers-rope-scaling-llama3-old).
    ("vllm-rope-scaling-without-factor",
     "ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': 8.0}\n"),
    # A library found but too old, or a feature the installed library lacks, is another failure.
    ("library-requires-backend-not-installed", "ImportError: Using `bitsandbytes` 4-bit quantization requires the latest "
     "version of bitsandbytes: `pip install -U bitsandbytes`\n"),
    ("library-requires-backend-not-installed", "ValueError: This model requires the tokenizer library version 0.20 or later\n"),
    # A processor registry of the user's own code is not LLaMA-Factory's.
    ("llamafactory-processor-not-loaded", "ValueError: Processor was not found in the registry: my_processor\n"),
    # fx's other refusals (a node used before it is defined) come from graphs the user builds by hand.
    ("torch-fx-graph-pass-erased-used-node", "RuntimeError: Argument 'x' of Node 'add' was used before it has been defined!\n"),
])
def test_look_alikes_of_an_entrys_class_are_not_named_by_it(catalog, entry, line):
    assert entry not in {m.signature.id for m in explain([line], catalog).matches}
