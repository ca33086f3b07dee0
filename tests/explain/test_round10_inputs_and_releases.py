"""Round 10's classes (issue 23) against their look-alikes: each entry fires on its class and leaves the lines that
share its words but not its mechanism. The positive lines are the entries' saved logs (tests/data/logs/<id>.log,
checked by tests/matrix/test_signatures.py); these are the other side."""

from __future__ import annotations

import pytest

from compat.explain.match import explain
from compat.explain.verdict import ErrorVerdict


def _ids(catalog, text: bytes) -> list[str]:
    return [m.signature.id for m in explain([text], catalog).matches]


@pytest.mark.parametrize(("line", "absent"), [
    # An empty file or an HTML page read as JSON is a download or a server, not a file's author.
    (b"json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n", "json-file-syntax-error"),
    # argparse refusing a value it does not know is a release's choices as often as a typo: not a value left out.
    (b"trl: error: argument command: invalid choice: 'grpo' (choose from 'sft', 'dpo')\n", "cli-option-missing-its-value"),
    # Another server's bind failure (torchft's lighthouse, in Rust) is not torch's rendezvous.
    (b"RuntimeError: Address already in use (os error 98)\n", "rendezvous-port-in-use"),
    # A top-level stack package missing is stack-package-not-installed; a user's own package is the user's.
    (b"ModuleNotFoundError: No module named 'ray'\n", "stack-submodule-missing-from-release"),
    (b"ModuleNotFoundError: No module named 'my_utils.helpers'\n", "stack-submodule-missing-from-release"),
    (b"ModuleNotFoundError: No module named 'raylib.serve'\n", "stack-submodule-missing-from-release"),
    # Every safetensors release knows cuda: a cuda device refused is something else.
    (b"safetensors_rust.SafetensorError: device cuda:0 is invalid\n", "safetensors-device-unknown-to-release"),
])
def test_a_look_alike_is_not_the_class(catalog, line, absent):
    assert absent not in _ids(catalog, line)


@pytest.mark.parametrize("module", ["transformers.models.glm4v_moe", "vllm.engine.ray_utils", "trl.commands"])
def test_the_api_timeline_answers_first_for_an_indexed_package(catalog, module):
    # The timeline names the release that added or removed the module; the class entry yields to it.
    result = explain([f"ModuleNotFoundError: No module named '{module}'\n".encode()], catalog)
    (error,) = result.errors
    assert error.verdict is ErrorVerdict.KNOWN and error.api is not None and error.api.decided
    assert "stack-submodule-missing-from-release" not in [m.signature.id for m in result.matches]


def test_a_submodule_of_an_unindexed_stack_package_is_named(catalog):
    # Ray is not in the API index: the class names it, from the user's own import as well (the user cannot add
    # a module to ray; a release can).
    log = (b"Traceback (most recent call last):\n"
           b'  File "/home/me/serve.py", line 2, in <module>\n'
           b"    from ray.serve.llm import LLMConfig\n"
           b"ModuleNotFoundError: No module named 'ray.serve.llm'\n")
    (error,) = explain([log], catalog).errors
    assert error.verdict is ErrorVerdict.KNOWN
    assert "stack-submodule-missing-from-release" in error.signatures


@pytest.mark.parametrize(("line", "sid"), [
    # Each printed alone, as a logger or an issue's title shows it (zhayujie/CowAgent#954, justchenhao/STANet#102,
    # NVIDIA/Megatron-LM#343's last line).
    (b"[ERROR][2023-04-25 17:42:22][app.py:53] - Expecting ',' delimiter: line 19 column 5 (char 362)\n",
     "json-file-syntax-error"),
    (b"error: argument --model: expected one argument\n", "cli-option-missing-its-value"),
    (b"RuntimeError: Address already in use\n", "rendezvous-port-in-use"),
    # swar/Swar-Chia-Plot-Manager#250: PyYAML's error and the place it names.
    (b"yaml.scanner.ScannerError: mapping values are not allowed here\n"
     b'  in "C:\\Users\\Pat\\Desktop\\Swar-Chia-Plot-Manager-main\\config.yaml", line 9, column 8\n', "yaml-file-syntax-error"),
])
def test_a_usage_class_gives_known_usage_even_without_a_traceback(catalog, line, sid):
    (error,) = explain([line], catalog).errors
    assert error.verdict is ErrorVerdict.KNOWN_USAGE, error.reasons
    assert sid in error.signatures


def test_the_users_own_module_lookup_on_a_str_is_not_transformers_registry(catalog):
    # The registry class needs a library's frame, or none printed (an issue's prose, a CI summary line).
    log = (b"Traceback (most recent call last):\n"
           b'  File "/home/me/train.py", line 9, in <module>\n'
           b"    print(name.__module__)\n"
           b"AttributeError: 'str' object has no attribute '__module__'\n")
    assert "transformers-auto-register-needs-config-class" not in _ids(catalog, log)
    # Printed alone, as a title or a CI line shows it (huggingface/smolagents#2487), it is named.
    line = b"CI fails: AttributeError: 'str' object has no attribute '__module__'\n"
    assert "transformers-auto-register-needs-config-class" in _ids(catalog, line)
