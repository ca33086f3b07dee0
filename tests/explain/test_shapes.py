"""A message printed without its exception type is read as the error its shape says (compat/explain/shapes.py): a
lazy importer's nested message and an issue title's bare AttributeError reach the catalog and the API timeline."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.shapes import type_of
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()


@pytest.mark.parametrize(("message", "expected"), [
    ("'Accelerator' object has no attribute 'deepspeed_engine_wrapped'", "AttributeError"),
    ("Accelerator' object has no attribute 'deepspeed_engine_wrapped'", "AttributeError"),  # a paste that lost a quote
    ("module 'torch.compiler' has no attribute 'is_compiling'", "AttributeError"),
    ("type object 'Trainer' has no attribute 'tokenizer'", "AttributeError"),
    ("name 'PreTrainedTokenizer' is not defined", "NameError"),
    ("register_pytree_node() got an unexpected keyword argument 'flatten_with_keys_fn'", "TypeError"),
    ("Trainer.compute_loss() takes 3 positional arguments but 4 were given", "TypeError"),
    ("No module named 'triton.ops'", "ModuleNotFoundError"),
    ("cannot import name 'DIFFUSERS_CACHE' from 'diffusers.utils'", "ImportError"),
    ("the object has no attribute set", ""),
    ("name resolution failed", ""),
])
def test_the_type_a_message_shape_says(message: str, expected: str) -> None:
    assert type_of(message) == expected


# huggingface/diffusers#5661 (no traceback printed) and prs-eth/DGInStyle#11 (the wrapper's own traceback): the name is
# missing from diffusers' module as a transformers release it was not written for leaves it.
NESTED = [
    "Failed to import diffusers.models.unet_2d because of the following error (look up to see its traceback):\n"
    "name 'PreTrainedTokenizer' is not defined\n",
    '  File "/root/miniconda3/lib/python3.10/site-packages/diffusers/utils/import_utils.py", line 712, in _get_module\n'
    "    raise RuntimeError(\n"
    "RuntimeError: Failed to import diffusers.models.autoencoder_kl because of the following error (look up to see its"
    " traceback):\nname 'PreTrainedModel' is not defined\n",
]


@pytest.mark.parametrize("log", NESTED)
def test_a_nested_message_without_its_type_is_read_as_that_error(log: str) -> None:
    result = explain(log.splitlines(keepends=True), MATRIX)
    assert "name-undefined-in-package-code" in [m.signature.id for m in result.matches]
    assert result.verdict.value == "known"
    assert result.errors[0].chain[0].type == "NameError"


def test_the_wrapper_wording_without_its_parenthesis_nests_too() -> None:
    log = ("RuntimeError: Failed to import diffusers.models.unet_2d because of the following error:\n"
           "name 'PreTrainedTokenizer' is not defined\n")
    assert "name-undefined-in-package-code" in [m.signature.id for m in explain(log.splitlines(keepends=True), MATRIX).matches]


def test_a_bare_member_message_is_asked_of_the_api_timeline() -> None:
    result = explain(["Accelerator' object has no attribute 'deepspeed_engine_wrapped'\n"], MATRIX)
    assert result.verdict.value == "known"
    answer = result.errors[0].api
    assert answer is not None and answer.key == "accelerate:Accelerator.deepspeed_engine_wrapped"


def test_prose_that_only_mentions_an_attribute_is_no_error() -> None:
    result = explain(["the config object has no attribute listing in the docs\n"], MATRIX)
    assert not result.errors


def test_a_titles_retelling_never_stands_in_for_the_printed_traceback() -> None:
    """An issue that tells the error before pasting it: the traceback, which says the user's own code raised it, is
    the error read; the title's frameless retelling (which alone would leave the environment a suspect) is not."""
    log = ("Training fails with 'LossTracker' object has no attribute 'history' after the first epoch\n"
           "Traceback (most recent call last):\n"
           '  File "/home/user/train.py", line 88, in <module>\n'
           "    tracker.history.append(loss)\n"
           "AttributeError: 'LossTracker' object has no attribute 'history'\n")
    result = explain(log.splitlines(keepends=True), MATRIX)
    (error,) = result.errors
    assert error.root.innermost is not None and error.root.innermost.file == "/home/user/train.py"
    assert error.verdict.value == "not-environment" and error.count == 2


def test_a_retold_message_stands_where_nothing_was_printed() -> None:
    result = explain(["Training fails with 'Accelerator' object has no attribute 'deepspeed_engine_wrapped'\n"], MATRIX)
    assert [e.root.type for e in result.errors] == ["AttributeError"]
