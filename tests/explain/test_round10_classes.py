"""Round 10 of issue 23: the classes behind heldout7's misses, each tested on lines from other public threads.

- A package's own module body raising (`site-packages/x/__init__.py", line 20, in <module>`) is an import: whatever the
  type (a FileNotFoundError for a shared library the release looks for), it is the install's, not the program's.
- A frame line whose paste lost its start (`.../x/__init__.py", line 20, in <module>`, no `File "`) is still a frame.
- `model-config-read-as-dict`, `private-module-attribute-missing` (generic classes) and
  `unsloth-compiled-module-not-created` (matrix/signatures/round10_classes.toml): they fire on the lines of the
  threads the entries cite and not on the user's own code raising the same words.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compat.explain.match import explain
from compat.explain.verdict import Clue, ErrorVerdict
from compat.matrix import load_matrix
from tests.support.paths import LOGS

MATRIX = load_matrix()
NO_CATALOG = SimpleNamespace(signatures=())


def _blocks() -> list:
    text = (LOGS / "classes" / "package-module-body-raises.log").read_text(encoding="utf-8")
    blocks = [b.split("\n", 1) for b in text.split("\n# ") if b.strip()]
    return [pytest.param(body.strip("\n") + "\n", id=f"block{i}") for i, (_head, body) in enumerate(blocks)]


@pytest.mark.parametrize("text", _blocks())
def test_a_packages_module_body_raising_is_an_import(text: str) -> None:
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT, error.reasons
    assert f"clue: {Clue.IMPORT.value}" in error.reasons
    raiser = error.chain[0].raiser
    assert raiser is not None and raiser.package == "librsync" and raiser.function == "<module>" and raiser.line == 20


def test_the_users_own_module_body_raising_stays_the_programs() -> None:
    text = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 12, in <module>\n'
            '    rows = open("data/train.jsonl").read()\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.jsonl'\n")
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_a_cut_frame_line_needs_its_quote_and_a_path() -> None:
    # Prose that names a file and a line is no frame: no closing quote after `.py`, or no directory in the path.
    for line in ('see train.py", line 3, in main\n', "the error is in /x/y.py line 3, in main\n"):
        text = line + "ValueError: bad value\n"
        (error,) = explain([text], NO_CATALOG).errors
        assert error.chain[0].frames == (), line


def _ids(text: str) -> list[str]:
    return [m.signature.id for m in explain([text], MATRIX).matches]


@pytest.mark.parametrize("line", [
    "AttributeError: 'dict' object has no attribute 'model_type'",  # huggingface/transformers#42374
    "AttributeError: 'dict' object has no attribute 'vocab_size'",  # EvolvingLMMs-Lab/lmms-eval#442
    "qwen_image运行报错\uff1a 'dict' object has no attribute 'hidden_size'",  # modelscope/DiffSynth-Studio#809
    "!!! Exception during processing !!! 'dict' object has no attribute 'model_type'",  # 1038lab/ComfyUI-QwenVL#50
])
def test_a_config_read_as_a_dict_is_named(line: str) -> None:
    assert _ids(line + "\n")[:1] == ["model-config-read-as-dict"]


def test_a_dict_the_users_own_code_reads_as_a_config_is_not_named() -> None:
    text = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 8, in <module>\n'
            "    print(cfg.model_type)\nAttributeError: 'dict' object has no attribute 'model_type'\n")
    assert "model-config-read-as-dict" not in _ids(text)


def test_a_dicts_other_attributes_are_not_a_config() -> None:
    assert "model-config-read-as-dict" not in _ids("AttributeError: 'dict' object has no attribute 'append'\n")


@pytest.mark.parametrize("line", [
    "AttributeError: module 'torch._C' has no attribute '_TensorBase'",  # pytorch/pytorch#8088
    "AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'",  # hpzhao/SummaRuNNer#32
    "AttributeError: module 'torch._C' has no attribute '_cudnn_batch_norm_forward'",  # phybrain/efficientdensenet_crnn#7
])
def test_a_private_modules_missing_name_is_named(line: str) -> None:
    assert _ids(line + "\n")[:1] == ["private-module-attribute-missing"]


@pytest.mark.parametrize("line", [
    "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'",  # a public module: other entries and the API timeline
    "AttributeError: module 'my_project_utils' has no attribute 'helper'",
])
def test_a_public_modules_missing_name_is_not_this_class(line: str) -> None:
    assert "private-module-attribute-missing" not in _ids(line + "\n")


def test_a_private_module_of_the_users_own_code_is_not_named() -> None:
    text = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 8, in <module>\n'
            "    mypkg._impl.run()\nAttributeError: module 'mypkg._impl' has no attribute 'run'\n")
    assert "private-module-attribute-missing" not in _ids(text)


def test_a_package_entry_for_a_private_module_outranks_the_class() -> None:
    # huggingface/transformers#31385: torch.utils._pytree has its own entry, which names the release.
    line = "AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'\n"
    ids = _ids(line)
    assert ids and ids[0] != "private-module-attribute-missing"


@pytest.mark.parametrize("line", [
    'RuntimeError: Unsloth: Failed to create dynamic compiled modules!',  # unslothai/unsloth#1925
    'RuntimeError: Unsloth: Failed to create dynamic compiled',  # unslothai/unsloth#1915 (the title, cut)
    'ImportError: Unsloth: Cannot import unsloth_compiled_cache/Conv3d.py',  # unslothai/unsloth#1328
])
def test_unsloths_compiled_modules_not_created_is_named(line: str) -> None:
    result = explain([line + "\n"], MATRIX)
    assert [m.signature.id for m in result.matches][:1] == ["unsloth-compiled-module-not-created"]
    assert result.verdict.value == "known"


@pytest.mark.parametrize("line, fires", [
    ("Fix AttributeError: np.NaN removed in NumPy 2.0 (use np.nan instead)", True),  # rajanlab/CURBD#5
    ("`np.NaN` is removed in numpy 2.", True),  # lightkurve/lightkurve#1473
    ("np.NaN was removed in Numpy 2.0", True),  # gedeck/mistat#7
    ("np.float removed in numpy 1.24", False),  # 1.24's builtin alias: numpy124-removed-builtin-alias's wording
    ("np.trapz was removed", False),  # deprecated in NumPy 2.0, not one of its removed aliases
])
def test_numpy2s_removed_alias_is_named_as_titles_paraphrase_it(line: str, fires: bool) -> None:
    assert ("numpy2-removed-alias" in _ids(line + "\n")) is fires


@pytest.mark.parametrize("line", [
    "TypeError: 'NoneType' object is not iterable",  # elb3k/vtn#2 (corrupted data), apryor6/flask_api_example#1 (own code)
    "TypeError: argument of type 'NoneType' is not iterable",  # clvrai/SSGAN-Tensorflow#26 (an argument left None)
    "TypeError: 'NoneType' object is not subscriptable",
])
def test_a_frameless_none_iterated_or_indexed_is_the_datas(line: str) -> None:
    (error,) = explain([line + "\n"], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT, error.reasons


def test_a_none_iterated_in_a_packages_frame_stays_a_suspect() -> None:
    text = ('Traceback (most recent call last):\n  File "/venv/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", '
            'line 900, in _generate\n    for k in self.args.generation_kwargs:\nTypeError: \'NoneType\' object is not iterable\n')
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT


@pytest.mark.parametrize("line", [
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (30812x12 and 128x64)",  # talbenha/cell-tracker-gnn#8 (images of another size than the config's)
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4608x2048 and 4096x1024)",  # fartashf/vsepp#49 (the model's sizes)
    "RuntimeError: shape '[-1, 2, 64]' is invalid for input of size 100",
])
def test_a_frameless_shape_mismatch_is_the_datas(line: str) -> None:
    (error,) = explain([line + "\n"], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT, error.reasons
    assert "shapes" in error.reasons[0]


def test_a_shape_mismatch_in_a_packages_frame_stays_a_suspect() -> None:
    text = ('Traceback (most recent call last):\n  File "/venv/lib/python3.11/site-packages/transformers/models/llama/'
            'modeling_llama.py", line 160, in apply_rotary_pos_emb\n    q_embed = (q * cos) + (rotate_half(q) * sin)\n'
            "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at non-singleton dimension 3\n")
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT
