"""Round 11 of issue 23: mechanisms behind heldout6/heldout8's misses, each tested on lines from other public threads.

- `report-names-a-release-that-broke-it` (matrix/signatures/round11_claims.toml, generic): prose naming a stack
  package's release as what broke the run; the error printed under it (a ValueError of a new return type) is then no
  longer taken for the program's.
- A call's TypeError retyped without its type (an issue title's `LoraConfig.__init__() got an unexpected keyword
  argument 'eva_config'`) is read as the TypeError it is, so the API timeline is asked about it.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compat.explain.drift import questions
from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict
from compat.matrix import load_matrix
from compat.timeline.records import Missing
from tests.support.paths import LOGS

MATRIX = load_matrix()
NO_CATALOG = SimpleNamespace(signatures=())
CLAIM = "report-names-a-release-that-broke-it"
CLAIMS = (LOGS / f"{CLAIM}.log").read_text(encoding="utf-8").splitlines()


def _ids(text: str) -> list[str]:
    return [m.signature.id for m in explain([text], MATRIX).matches]


@pytest.mark.parametrize("line", CLAIMS)
def test_each_cited_claim_names_a_release(line: str) -> None:
    assert CLAIM in _ids(line + "\n")


@pytest.mark.parametrize("line", [
    "I am using vllm 0.7.0 and transformers 4.48.0",          # a version stated, no claim that it broke anything
    "pip install transformers==4.46.0 trl==0.12.0",
    "After updating the dataset to the new format, the loss is NaN",
    "Error with my config: max_length 2048",
    "Is this a compatibility issue with my GPU?",
])
def test_a_version_said_without_blame_is_no_claim(line: str) -> None:
    assert CLAIM not in _ids(line + "\n")


def test_a_claim_above_a_data_typed_error_makes_the_log_an_environment_failure() -> None:
    # SearchSavior/OpenArc#95's claim above the ValueError a caller's own check raises on the new return type.
    text = (CLAIMS[0] + "\n\n```\nValueError: Prompt tokenization mismatch at idx 3.\n```\n")
    without = explain([text.split("\n", 1)[1]], MATRIX)
    assert without.verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert explain([text], MATRIX).verdict is ErrorVerdict.KNOWN


def test_a_calls_typeerror_without_its_type_is_read() -> None:
    # FLock-io/testnet-training-node-quickstart#27 quotes peft's error without its type.
    line = "to address the error: `LoraConfig.__init__() got an unexpected keyword argument 'eva_config'`. This ensures\n"
    (error,) = explain([line], NO_CATALOG).errors
    assert error.chain[0].type == "TypeError"
    (q,) = questions(error.chain[0])
    assert (q.missing, q.module, q.name) == (Missing.KEYWORD, "LoraConfig.__init__", "eva_config")


def test_a_retyped_argument_without_quotes_is_the_same_question() -> None:
    (error,) = explain(["Accelerator.__init__() got an unexpected keyword argument use_seedable_sampler\n"], NO_CATALOG).errors
    (q,) = questions(error.chain[0])
    assert (q.module, q.name) == ("Accelerator.__init__", "use_seedable_sampler")


def test_prose_about_arguments_is_no_typeerror() -> None:
    (error,) = explain(["ValueError: bad value\n"], NO_CATALOG).errors  # nothing else read from an ordinary line
    assert error.chain[0].type == "ValueError"
    assert explain(["the function takes an unexpected keyword argument sometimes\n"], NO_CATALOG).errors == ()
