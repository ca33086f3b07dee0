"""Every way a facts document can be wrong is one line naming the key path and what was expected."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compat.errors import FactsError
from compat.model import codec
from compat.model.facts import Facts, dump_facts, load_facts
from tests.golden.inputs import h100_box


def _doc() -> dict[str, Any]:
    return json.loads(dump_facts(h100_box()))


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("hardware.source", "gpu-magic", r"\$\.hardware\.source: 'gpu-magic' is not one of 'nvml', "),
        ("hardware.gpus.0.index", True, r"\$\.hardware\.gpus\[0\]\.index: expected an integer"),
        ("hardware.gpus.0.index", "0", r"expected an integer"),
        ("hardware.gpus", {"unknown": 3}, r"\$\.hardware\.gpus: expected \{\"unknown\": reason\} or expected a list"),
        ("launch.env", ["CUDA_VISIBLE_DEVICES"], r"\$\.launch\.env: expected an object"),
        ("launch.env.NCCL_DEBUG", 1, r"\$\.launch\.env\.NCCL_DEBUG: expected a string"),
        ("torch.cxx11_abi", "no", r"\$\.torch\.cxx11_abi: expected \{\"unknown\": reason\} or expected true or false"),
        ("script.use_vllm", "yes", r"\$\.script\.use_vllm: .*expected null"),
        ("launch.accelerate", "FSDP", r"\$\.launch\.accelerate: .*expected an object"),
        ("python.extra", 1, r"\$\.python: unexpected key 'extra'"),
    ],
)
def test_a_wrong_value_names_its_path(path, value, message):
    with pytest.raises(FactsError, match=message) as info:
        load_facts(json.dumps(_set(_doc(), path, value)), origin="snap.json")
    assert str(info.value).startswith("snap.json: ")
    assert "\n" not in str(info.value)


def test_a_missing_required_key():
    doc = _doc()
    del doc["hardware"]["driver"]
    with pytest.raises(FactsError, match=r"\$\.hardware: missing key 'driver'"):
        load_facts(json.dumps(doc))


def test_fields_with_defaults_may_be_left_out():
    doc = _doc()
    for key in ("script", "declared", "system"):
        del doc[key]
    facts = load_facts(json.dumps(doc))
    assert facts.script is None and facts.declared == ()


def test_numbers_decode_as_floats_and_any_passes_through():
    assert codec._decode(float, 3, "$") == 3.0
    with pytest.raises(codec.DecodeError, match="expected a number"):
        codec._decode(float, "3", "$")
    assert codec._decode(Any, {"a": [1]}, "$") == {"a": [1]}


def test_a_type_the_codec_does_not_know_is_a_bug_not_bad_input():
    with pytest.raises(TypeError, match="cannot decode"):
        codec._decode(bytes, "x", "$")


def test_the_snapshot_of_a_probed_box_round_trips():
    assert load_facts(dump_facts(h100_box())) == h100_box()
    assert isinstance(load_facts(dump_facts(h100_box())), Facts)
