"""explain(): ranking, deduplication across ranks, prefixes, hostile input, the environment."""

from __future__ import annotations

import dataclasses

import pytest

from compat.explain.match import MAX_LINES_PER_MATCH, explain
from compat.explain.scan import MAX_LINE, clean, dedup_key, required_literals, trie_regex
from compat.model.facts import Facts, Script
from compat.model.unknown import Unknown
from tests.support.facts import declared_hardware, facts, launch_by
from tests.support.facts import gpus as a_row_of
from tests.support.paths import LOGS


def ids(result):
    return [m.signature.id for m in result.matches]


@pytest.mark.parametrize("name", ["dataset-keyerror", "user-nameerror", "garbage", "empty", "near-miss-2026b",
                                  "near-miss-classes-2026", "near-miss-round22"])
def test_errors_that_are_not_environment_problems_match_nothing(catalog, name):
    result = explain([(LOGS / "negative" / f"{name}.log").read_bytes()], catalog)
    assert result.matches == () and not result.known


def test_empty_input_and_no_blocks(catalog):
    assert explain([], catalog).lines_scanned == 0
    assert explain(["", b""], catalog).matches == ()


def test_eight_ranks_interleaved_collapse_to_one_line_and_beat_the_launcher_summary(catalog):
    result = explain([(LOGS / "reports" / "multirank-ddp-dtensor.log").read_bytes()], catalog)
    assert ids(result)[0] == "device-map-auto-silent-tensor-parallel"
    first = result.matches[0]
    assert first.occurrences == 8 and len(first.lines) == 1 and first.lines[0].count == 8
    assert first.lines[0].text == "AssertionError: found no DeviceMesh from dtensor args for c10d.broadcast_.default!"
    assert first.context_found is True
    wrapper = result.matches[-1]
    assert wrapper.signature.id == "torch-elastic-child-failed" and wrapper.score < first.score
    assert result.known


def test_vllm_process_prefixes_and_the_engine_wrapper(catalog):
    result = explain([(LOGS / "reports" / "vllm-engine-free-memory.log").read_text()], catalog)
    assert ids(result) == ["vllm-v1-free-memory-startup", "vllm-engine-core-init-failed"]
    assert result.matches[0].lines[0].text.startswith("ValueError: Free memory on device")
    assert result.matches[0].lines[0].number == 5


def test_a_real_report_names_its_failure_first(catalog):
    result = explain([(LOGS / "reports" / "trl-2851-grpo-vllm-two-gpus.log").read_bytes()], catalog)
    assert ids(result)[0] == "grpo-vllm-device-mismatch"
    assert ids(result).index("trl-more-processes-than-gpus") > 0
    assert ids(result)[-1] == "torch-elastic-child-failed"


def test_ansi_colours_and_timestamps_do_not_hide_a_match(catalog):
    line = "\x1b[1;31m[rank3]:\x1b[0m 2025-02-13 10:01:02,123 \x1b[31mRuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\x1b[0m\n"
    result = explain([line], catalog)
    assert ids(result) == ["cuda-driver-insufficient-runtime"]
    assert result.matches[0].lines[0].text == "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"


def test_wrappers_alone_are_not_a_known_failure(catalog):
    result = explain([(LOGS / "torch-elastic-child-failed.log").read_bytes()], catalog)
    assert ids(result) == ["torch-elastic-child-failed"] and not result.known


def test_lines_are_capped_per_match_and_numbered_across_blocks(catalog):
    blocks = [f"step {i}\n" for i in range(10)]
    blocks += [f"[rank0]: RuntimeError: world_size ({n}) is not equal to tensor_model_parallel_size (4) x pipeline_model_parallel_size (1)\n" for n in range(20)]
    result = explain(blocks, catalog)
    m = result.matches[0]
    assert m.occurrences == 20 and len(m.lines) == MAX_LINES_PER_MATCH
    assert m.lines[0].number == 11 and result.lines_scanned == 30


def test_huge_line_and_nul_bytes(catalog):
    huge = b"x" * (10 * 1024 * 1024) + b" Torch not compiled with CUDA enabled\x00\x00 more\n"
    result = explain([b"\xff\xfe\x00 garbage\n", huge], catalog)
    m = result.matches[0]
    assert m.signature.id == "torch-cpu-only-build" and m.lines[0].number == 2
    assert len(m.lines[0].text) <= 400


def test_invalid_utf8_in_the_matched_line(catalog):
    result = explain([b"\xc3\x28 RuntimeError: FlashAttention only supports Ampere GPUs or newer. \xff\n"], catalog)
    assert ids(result) == ["flash-attn-requires-ampere"]
    assert "\ufffd" in result.matches[0].lines[0].text


def _facts(packages: dict[str, str], *, launcher="accelerate", gpus=2, script: Script | None = None, accelerate=None) -> Facts:
    return facts(
        packages=packages,
        torch=Unknown(reason="test"),
        hardware=declared_hardware(gpus=a_row_of(gpus, cc="8.0"), driver="550.54.15", driver_cuda="12.4"),
        launch=launch_by(launcher, accelerate=accelerate, shm_bytes=Unknown(reason="test")),
        script=script,
    )


GRPO_VLLM = Script(path="train.py", trainers=("GRPOConfig", "GRPOTrainer"), device_maps=(), use_vllm=True, vllm_mode=None,
                   config_access=False, gradient_checkpointing=True, use_cache=None)


def test_the_environment_breaks_a_tie_between_look_alikes(catalog):
    line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n"
    bare = explain([line], catalog)
    assert ids(bare)[0] == "trl-more-processes-than-gpus"
    env = _facts({"trl": "0.15.0", "vllm": "0.6.6.post1", "torch": "2.5.1"}, script=GRPO_VLLM)
    ranked = explain([line], catalog, env)
    assert ids(ranked)[0] == "grpo-vllm-device-mismatch"
    notes = ranked.matches[0].notes
    assert any(n.startswith("your environment fits: trl 0.15.0") for n in notes)
    assert "you have vllm 0.6.6.post1; the fix needs vllm==0.7.2" in notes


def test_an_entry_that_requires_its_library_takes_the_environment_as_evidence_only_for_what_the_script_runs(catalog):
    """The bare two-device message is a launch mistake; the GRPO-with-vLLM entry, which requires vLLM's frames, fires
    without them only where the facts say the script runs GRPO with vLLM on the trl and vLLM it is about."""
    line = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n"
    bare = explain([line], catalog)
    assert ids(bare) == ["trl-more-processes-than-gpus"]
    assert bare.verdict.value == "known-usage"
    other_script = dataclasses.replace(GRPO_VLLM, trainers=("SFTTrainer",), use_vllm=False)
    assert ids(explain([line], catalog, _facts({"trl": "0.15.0", "vllm": "0.6.6.post1"}, script=other_script))) == [
        "trl-more-processes-than-gpus"]
    frames = '  File "/venv/lib/python3.11/site-packages/vllm/worker/model_runner.py", line 9, in execute_model\n'
    assert "grpo-vllm-device-mismatch" in ids(explain([frames, line], catalog))


def test_a_fix_already_installed_is_said_so(catalog):
    env = _facts({"trl": "0.17.0", "torch": "2.6.0"}, launcher="python", script=dataclasses.replace(GRPO_VLLM, trainers=("OnlineDPOTrainer",), use_vllm=None))
    result = explain([(LOGS / "online-dpo-dataparallel-config.log").read_text()], catalog, env)
    # the launch-mistake entry for any wrapper attribute ranks beside it; this one's fix is installed
    m = next(m for m in result.matches if m.signature.id == "online-dpo-dataparallel-config")
    assert m.verdict is not None and m.verdict.outcome.value == "no-match"
    assert any("already satisfies >=0.17.0" in n for n in m.notes)


class _Release:
    def __init__(self, version, requires):
        from packaging.requirements import Requirement
        from packaging.version import Version
        self.version = Version(version)
        self.requires = tuple(Requirement(r) for r in requires)


class _Index:
    def get(self, name):
        if name != "vllm":
            return None
        return type("P", (), {"releases": (_Release("0.7.2", ["torch==2.5.1", "transformers>=4.48.2"]),)})()


def test_a_pinned_fix_says_what_it_pulls_in(catalog):
    from types import SimpleNamespace
    matrix = SimpleNamespace(signatures=catalog.signatures, releases=_Index())
    env = _facts({"trl": "0.15.0", "vllm": "0.7.0", "torch": "2.5.1", "transformers": "4.48.1"}, script=GRPO_VLLM)
    result = explain([(LOGS / "grpo-vllm-device-mismatch.log").read_text()], matrix, env)
    notes = result.matches[0].notes
    assert "vllm 0.7.2 needs torch==2.5.1; you have 2.5.1 (which you have)" in notes
    assert "vllm 0.7.2 needs transformers>=4.48.2; you have 4.48.1 (installing it will replace it)" in notes


def test_conditions_that_cannot_be_decided_are_reported(catalog):
    env = _facts({"trl": "0.15.0", "vllm": "0.6.6"}, script=None)
    result = explain([(LOGS / "grpo-vllm-device-mismatch.log").read_text()], catalog, env)
    assert "cannot check: no training script given (--script)" in result.matches[0].notes


def test_clean_and_dedup_key():
    assert clean("\x1b[31m[rank7]:\x1b[0m boom") == "boom"
    assert clean("(EngineCore_DP0 pid=123) ERROR 07-12 13:11:56 [core.py:586] boom") == "boom"
    assert clean("[default3]:2025-02-13 10:01:02,123 boom") == "boom"
    assert dedup_key("[rank1]: [Rank 1] Watchdog") == dedup_key("[rank5]: [Rank 5] Watchdog")


def test_required_literals_and_trie():
    assert required_literals(r"cuda:\d+ and (cpu|meta) tensors") == frozenset({" tensors"})
    assert required_literals(r"(?i)anything goes") is None
    assert required_literals(r"\d+\w*") is None
    assert required_literals(r"foo(bar)?bazz|quux") == frozenset({"bazz", "quux"})
    import re
    rx = re.compile(trie_regex(["abcd", "abce", "xyzw"]))
    assert [m.group() for m in rx.finditer("..abce..xyzw..abcf")] == ["abce", "xyzw"]
    assert MAX_LINE == 64 * 1024
