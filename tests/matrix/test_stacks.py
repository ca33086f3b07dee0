"""matrix/stacks.toml (sets upstream projects ran) and the preference order it drives."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import MatrixError
from compat.matrix import load_matrix
from compat.matrix._toml import Table
from compat.matrix.stacks import load_stacks

runner = CliRunner()

GOOD = {
    "id": "open-r1-2025-04-08",
    "project": "huggingface/open-r1",
    "source": "huggingface/open-r1@bf08f5684990:setup.py",
    "date": "2025-04-08",
    "pins": {"trl": "0.16.0", "vllm": "0.7.2"},
}


def _load(*stacks: dict, file: str = "matrix/stacks.toml"):
    return load_stacks([Table({"stack": list(stacks)}, file=file, path="")])


def test_a_stack_loads_with_its_pins_sorted():
    table = _load(GOOD)
    (stack,) = table.stacks
    assert [(n, str(v)) for n, v in stack.pins] == [("trl", "0.16.0"), ("vllm", "0.7.2")]
    assert table.with_package("vllm") == (stack,) and table.with_package("torch") == ()


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        ({"id": "Open R1"}, "stack[0].id", "lowercase words"),
        ({"source": "open-r1 setup.py"}, "stack[0].source", "owner/name@commit:path"),
        ({"source": "other/repo@bf08f5684990:setup.py"}, "stack[0].source", "is not in huggingface/open-r1"),
        ({"date": "April 2025"}, "stack[0].date", "not a date"),
        ({"pins": {"trl": "0.16.0"}}, "stack[0].pins", "at least two packages"),
        ({"pins": {"trl": "0.16.0", "liger_kernel": "0.5.3"}}, "stack[0].pins.liger_kernel", "canonical name"),
        ({"pins": {"trl": "0.16.0", "torch": "2.5.1+cu124"}}, "stack[0].pins.torch", "without a build tag"),
        ({"pins": {"trl": "0.16.0", "vllm": "latest"}}, "stack[0].pins.vllm", "not a version"),
        ({"extra": 1}, "stack[0].extra", "unknown key"),
    ],
)
def test_a_bad_stack_names_the_file_and_key(change, key, message):
    with pytest.raises(MatrixError) as info:
        _load({**GOOD, **change})
    assert info.value.file == "matrix/stacks.toml" and info.value.key == key
    assert message in str(info.value)


def test_an_id_defined_twice_names_the_first_file():
    with pytest.raises(MatrixError, match=r"already defined in matrix/stacks\.toml"):
        load_stacks([
            Table({"stack": [GOOD]}, file="matrix/stacks.toml", path=""),
            Table({"stack": [GOOD]}, file="overlay/stacks.toml", path=""),
        ])


def test_every_shipped_stack_pins_recorded_releases():
    m = load_matrix()
    assert len(m.stacks.stacks) >= 20
    assert len({s.project for s in m.stacks.stacks}) >= 4
    for stack in m.stacks.stacks:
        for name, version in stack.pins:
            releases = m.releases.get(name)
            assert releases is not None and releases.find(version) is not None, f"{stack.id}: {name} {version}"


def _pins(args: list[str]) -> dict[str, str]:
    result = runner.invoke(app, ["lock", *args])
    assert result.exit_code == 0, result.output
    out = {}
    for line in result.stdout.splitlines():
        if line and not line.startswith(("#", "-")) and "==" in line:
            name, _, rest = line.partition("==")
            out[name.split("[")[0]] = rest
    return out


def test_the_seed_gets_the_vllm_torch_and_transformers_of_trl_015():
    pins = _pins(["trl[vllm]==0.15.1", "--gpus", "2xA100", "--driver", "550.54.15", "--python-version", "3.11"])
    # a stack that ran trl 0.15.1 itself (axolotl's) is closer evidence than trl 0.15.2's own extra
    assert pins["vllm"].startswith("0.7.2  ") and "tested with trl 0.15.1 in axolotl-ai-cloud/axolotl@" in pins["vllm"]
    assert pins["torch"].startswith("2.5.1")
    # transformers of trl 0.15's time (4.49, the one axolotl ran with trl 0.15.1), not 4.57.
    assert pins["transformers"].startswith("4.49.0  ") and "tested with trl 0.15.1 in" in pins["transformers"]


def test_open_r1_targets_reproduce_its_tested_set():
    pins = _pins(["trl==0.16.0", "vllm==0.7.2", "--gpus", "8xH100", "--driver", "550.54.15", "--python-version", "3.11"])
    assert pins["transformers"].startswith("4.50.0  ")
    assert "tested with trl 0.16.0, vllm 0.7.2 in huggingface/open-r1@bf08f5684990" in pins["transformers"]
    assert pins["accelerate"].startswith("1.4.0  ") and pins["torch"].startswith("2.5.1")


def test_a_tested_set_with_a_known_risk_yields_to_one_without_it():
    # OpenRLHF ran deepspeed 0.16.8 and vLLM 0.8.5.post1 with transformers 4.51.3, which with torch 2.6 cannot
    # resume from a checkpoint (torch26-weights-only-resume, a warning); open-r1 ran deepspeed 0.16.8 with
    # transformers 4.52.3, which can. The lock keeps off the risk and says which tested set it took instead.
    pins = _pins(["vllm==0.8.5.post1", "deepspeed==0.16.8", "--gpus", "8xH100", "--driver", "550.54.15",
                  "--python-version", "3.11"])
    assert pins["transformers"].startswith("4.52.3  ")
    assert "kept off torch26-weights-only-resume: transformers>=4.52.0" in pins["transformers"]
    assert "tested with deepspeed 0.16.8, vllm 0.8.4 in huggingface/open-r1@" in pins["transformers"]


def test_exclude_newer_drops_later_uploads():
    pins = _pins(["trl[vllm]", "--gpus", "2xA100", "--driver", "550.54.15", "--python-version", "3.11",
                  "--exclude-newer", "2025-03-01"])
    assert pins["trl"].startswith("0.15.2  ") and pins["vllm"].startswith("0.7.2  ")


def test_exclude_newer_must_be_a_date():
    result = runner.invoke(app, ["lock", "trl", "--gpus", "cpu", "--python-version", "3.11", "--exclude-newer", "soon"])
    assert "expected a date" in str(result.exception)
