"""transformers refusing a class a checkpoint names (tokenizer_config.json's `tokenizer_class`, a processor's class) is
a question for the API timeline: the release that first has the class decides; a class no release has (remote code,
an old misspelling) asks nothing and gets no answer."""

from __future__ import annotations

import pytest

from compat.explain.drift import questions
from compat.explain.match import explain
from compat.explain.roots import Raised
from compat.explain.verdict import ErrorVerdict
from compat.timeline.records import Missing
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()

# ml-explore/mlx-lm#683: a checkpoint saved by transformers 5 (its tokenizer_config.json names TokenizersBackend)
# read by a transformers 4 release.
_BACKEND = (
    "Traceback (most recent call last):\n"
    '  File ".venv/lib/python3.12/site-packages/mlx_lm/tokenizer_utils.py", line 463, in load\n'
    "    AutoTokenizer.from_pretrained(model_path, **kwargs),\n"
    '  File ".venv/lib/python3.12/site-packages/transformers/models/auto/tokenization_auto.py", line 1153, in from_pretrained\n'
    "    raise ValueError(\n"
    "ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.\n"
)


def test_a_class_a_later_release_added_is_named_with_the_release() -> None:
    (error,) = explain([_BACKEND], MATRIX).errors
    assert error.api is not None and error.api.key == "transformers:TokenizersBackend", error.api
    assert error.api.fix == ("transformers>=5.0.0",)
    assert error.verdict is ErrorVerdict.KNOWN


def test_the_line_alone_is_answered_too() -> None:
    # jingyaogong/minimind#578 pastes the message without its traceback
    (error,) = explain(["ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.\n"],
                       MATRIX).errors
    assert error.api is not None and error.api.fix == ("transformers>=5.0.0",)


@pytest.mark.parametrize("line", [
    # FreedomIntelligence/HuatuoGPT-II#18 and QwenLM/Qwen's README: classes of the checkpoints' own code, which need
    # trust_remote_code; no transformers release has them, so no release is a fix.
    "ValueError: Tokenizer class BaichuanTokenizer does not exist or is not currently imported.",
    "ValueError: Tokenizer class QWenTokenizer does not exist or is not currently imported.",
])
def test_a_class_no_release_has_gets_no_answer(line: str) -> None:
    (error,) = explain([line + "\n"], MATRIX).errors
    assert error.api is None and error.verdict is not ErrorVerdict.KNOWN


def test_the_processor_lookup_is_asked_of_the_class_it_names() -> None:
    raised = Raised(type="ValueError", line=1, frames=(), code=None, message=(
        "Could not find Qwen2_5_VLVideoProcessor neither in <module 'transformers.models.qwen2_5_vl' from "
        "'/env/lib/python3.10/site-packages/transformers/models/qwen2_5_vl/__init__.py'> nor in <module 'transformers'"))
    (q,) = questions(raised)
    assert (q.missing, q.name, q.module, q.known_only) == (Missing.IMPORT_NAME, "Qwen2_5_VLVideoProcessor", "transformers", True)


def test_every_clue_is_said_in_words_in_each_format_that_says_clues() -> None:
    # Clue.REGISTRY had no words: the text and GitHub annotations of any unknown-environment error with it was exit 3
    from compat.explain.verdict import Clue
    from compat.report.explain import _CLUE_WORDS, render_github, render_text

    assert set(_CLUE_WORDS) == set(Clue)
    result = explain(["ValueError: Tokenizer class QWenTokenizer does not exist or is not currently imported.\n"], MATRIX)
    assert [e.clues for e in result.errors] == [(Clue.REGISTRY,)]
    for render in (render_text, render_github):
        assert "does not know the model, class or backend" in render(result)
