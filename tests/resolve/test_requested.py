"""Nothing requested is dropped and nothing is assumed: extras, names, hardware, build tags, severities."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import UsageError
from compat.model.torch_variant import TorchVariant
from compat.resolve import check_targets, require_hardware
from compat.resolve.target import parse_targets
from tests.support.facts import make_facts

runner = CliRunner()


def _lock(*args: str):
    return runner.invoke(app, ["lock", *args])


def _pins(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        if line and not line.startswith(("#", "-")) and "==" in line:
            name, _, rest = line.partition("==")
            out[name.split("[")[0]] = rest.split()[0]
    return out


def test_an_extra_the_newest_release_lacks_is_not_dropped():
    # trl 0.13.0 has no [vllm] extra: the lock used to end there, without vLLM.
    result = _lock("trl[vllm]", "--gpus", "8xA100", "--driver", "535.104.05", "--python-version", "3.10")
    assert result.exit_code == 0, result.output
    pins = _pins(result.stdout)
    assert "vllm" in pins and "trl" in pins
    assert tuple(int(p) for p in pins["trl"].split(".")[:2]) >= (0, 14)


def test_a_pinned_release_without_the_extra_is_a_conflict():
    result = _lock("trl[vllm]==0.13.0", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.11")
    assert result.exit_code == 1
    assert "trl 0.13.0 has no [vllm] extra" in result.stderr


def test_an_unknown_target_is_a_usage_error_with_a_suggestion():
    result = _lock("trll", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.11")
    assert isinstance(result.exception, UsageError)  # main() prints it and exits 2
    assert "unknown target 'trll'" in str(result.exception) and "did you mean trl?" in str(result.exception)


def test_an_unknown_target_exits_2(tmp_path):
    from tests.support.main import compat_main

    done = compat_main("lock", "nosuchpkg", "--gpus", "cpu", "--python-version", "3.11")
    assert done.returncode == 2
    assert done.stderr.startswith(b"compat: error: unknown target 'nosuchpkg'")


def test_numpy_is_known_though_floating(matrix):
    check_targets(["numpy>=2", "torch"], matrix)
    with pytest.raises(UsageError, match="nosuchpkg"):
        check_targets(["nosuchpkg"], matrix)


def test_no_hardware_is_an_error_unless_declared():
    bare = make_facts(gpus=0, driver=None)
    with pytest.raises(UsageError, match="--gpus cpu"):
        require_hardware(dataclasses.replace(bare, declared=()))
    require_hardware(bare)  # declared: "gpus" is in facts.declared
    require_hardware(make_facts(gpus=2))


def test_gpus_cpu_gets_the_cpu_build():
    result = _lock("torch==2.6.0", "--gpus", "cpu", "--python-version", "3.11")
    assert result.exit_code == 0, result.output
    assert "torch==2.6.0+cpu" in result.stdout
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in result.stdout


def test_gpus_none_is_an_alias_of_cpu():
    result = _lock("torch==2.6.0", "--gpus", "none", "--python-version", "3.11")
    assert "torch==2.6.0+cpu" in result.stdout


def test_macos_is_never_a_cuda_build():
    result = _lock("torch==2.6.0", "--gpus", "cpu", "--python-version", "3.11", "--platform", "macos-arm64")
    assert result.exit_code == 0, result.output
    assert "torch==2.6.0  # target torch==2.6.0; cpu build\n" in result.stdout
    assert "cu1" not in result.stdout and "CUDA" not in result.stdout


def test_a_build_tagged_pin_is_accepted():
    result = _lock("torch==2.13.0+cu126", "--gpus", "1xV100", "--driver", "580.95.05", "--python-version", "3.11")
    assert result.exit_code == 0, result.output
    assert "torch==2.13.0+cu126  # target torch==2.13.0+cu126;" in result.stdout


def test_a_companion_tag_names_the_torch_build():
    needs = parse_targets(["torchvision==0.21.0+cu126"])
    assert [(n.name, str(n.specifier), n.variant) for n in needs] == [
        ("torch", "", TorchVariant.parse("cu126")), ("torchvision", "==0.21.0", None)]


def test_an_unpublished_build_is_a_conflict_that_names_it():
    result = _lock("torch==2.13.0+cu999", "--gpus", "1xH100", "--driver", "580.95.05", "--python-version", "3.11")
    assert result.exit_code == 1
    assert "torch 2.13.0 has no cu999 build" in result.stderr


@pytest.mark.parametrize("text", ["trl==0.15.0+local", "torch>=2.6+cu126", "torch==2.6.0+cu126,==2.6.0+cu124"])
def test_a_local_tag_outside_an_exact_torch_pin_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_targets([text])


def test_a_warning_level_entry_does_not_veto_a_common_pair():
    # torch26-weights-only-resume is a warning in doctor: the lock keeps the pair and notes the risk.
    result = _lock("torch==2.6.0", "transformers==4.51.3", "--gpus", "1xH100", "--driver", "550.54.15", "--python-version", "3.11")
    assert result.exit_code == 0, result.output
    assert "known failure torch26-weights-only-resume still applies" in result.stdout


@pytest.mark.parametrize("target", ["torch==2.13.0+abc", "torchvision==0.21.0+ubuntu1"])
def test_a_tag_that_names_no_torch_build_is_a_usage_error(target):
    with pytest.raises(UsageError, match=r"is not a torch build \(cpu, cu126, rocm6.2, xpu\)"):
        parse_targets([target])
