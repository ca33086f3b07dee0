"""A log that ends in a wrapper (a launcher's or an engine's exception that only says an error happened elsewhere) is
decided by the errors above it (issue 23): the wrapper is read as an echo by its type or its wording
(`roots.LAUNCHER_TYPES`, `roots.ECHO_WORDINGS`), whatever catalog entry names it or not, so it neither names the
failure nor outranks a user's bug above it."""

from __future__ import annotations

import re

import pytest

from compat.explain.match import explain
from compat.explain.roots import ECHO_WORDINGS, Raised, echoes
from compat.explain.verdict import ErrorVerdict
from tests.explain.test_unwritten_classes import _cases

# (type, message) of real wrapper lines, each with its thread.
ECHO_LINES = [
    # gpustack/gpustack#2723 and vllm-project/vllm#21882: vLLM V1's engine core at start-up.
    ("RuntimeError", "Engine core initialization failed. See root cause above. Failed core proc(s): {}"),
    ("RuntimeError", "Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}"),
    # vllm-project/vllm#11994, gpustack/gpustack#1540: vLLM V0's front end.
    ("RuntimeError", "Engine process failed to start. See stack trace for the root cause."),
    # The V1 executor re-raising a worker's error: lines of the saved logs of catalog entries vllm-lora-rank-above-max and
    # trl-vllm-serve-same-gpu (tests/data/logs/, from the threads those entries cite).
    ("RuntimeError", "Worker failed with error 'LoRA rank 32 is greater than max_lora_rank 16.', please check the stack "
                     "trace above for the root cause"),
    ("RuntimeError", "Worker failed with error 'NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)', please "
                     "check the stack trace above for the root cause"),
    # NVlabs/Fast-dLLM#37: accelerate launch's subprocess; Ree1s/IDM#4: a build's probe.
    ("subprocess.CalledProcessError", "Command '['/data/jiangdazhi/miniconda3/envs/d1/bin/python3.10', 'eval_llada.py', "
                                      "'--tasks', 'gsm8k']' returned non-zero exit status 1."),
    ("", "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1."),
    # deepspeedai/DeepSpeed#5302 and #4890: DeepSpeed's launcher.
    ("", "[ERROR] [launch.py:321:sigkill_handler] ['/data/anaconda3/envs/llama/bin/python', '-u', 'src/train_bash.py', "
         "'--local_rank=4'] exits with return code = 1"),
    # greatlog/SWAHR-HumanPose#11, lyu-yx/ACUMEN#4, jeffffffli/HybrIK#198: torch.multiprocessing.spawn.
    ("torch.multiprocessing.spawn.ProcessRaisedException", "-- Process 0 terminated with the following error:"),
    ("torch.multiprocessing.spawn.ProcessExitedException", "process 0 terminated with signal SIGKILL"),
    ("Exception", "process 3 terminated with signal SIGKILL"),
    # vllm-project/vllm#12529: a program's own referral to the error above it.
    ("", "Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue."),
    # torch.distributed.elastic (catalog entry torch-elastic-child-failed's threads): by its type.
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", ""),
]

NOT_ECHOES = [
    # SYSTRAN/faster-whisper#653, hiyouga/LlamaFactory#7894, QwenLM/Qwen#10: errors that are their own cause.
    ("RuntimeError", "CUDA failed with error forward compatibility was attempted on non supported HW"),
    ("ValueError", "Template qwen3 does not exist."),
    ("", "fatal: detected dubious ownership in repository at '/data/llm/code/Qwen-7B/flash-attention'"),
    # A message that mentions a process and an exit without being a launcher's summary.
    ("RuntimeError", "DataLoader worker (pid 1234) is killed by signal: Killed."),
]


def _raised(etype: str, message: str) -> Raised:
    return Raised(type=etype, message=message, frames=(), line=1)


@pytest.mark.parametrize(("etype", "message"), ECHO_LINES)
def test_a_launchers_or_engines_echo_is_read_as_one(etype, message):
    assert echoes(_raised(etype, message))


@pytest.mark.parametrize(("etype", "message"), NOT_ECHOES)
def test_an_error_that_is_its_own_cause_is_no_echo(etype, message):
    assert not echoes(_raised(etype, message))


def test_every_wording_of_the_table_has_a_real_line():
    for who, pattern in ECHO_WORDINGS:
        assert any(re.search(pattern, message) for _, message in ECHO_LINES), who


@pytest.mark.parametrize("text", _cases("wrapper-over-a-root-cause"))
def test_a_wrapper_over_a_root_cause_is_decided_by_the_root(catalog, text):
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.KNOWN
    *roots, last = sorted(result.errors, key=lambda e: e.first_line)
    assert last.wrapper and not any(e.wrapper for e in roots)
    assert any(e.verdict is ErrorVerdict.KNOWN for e in roots)


@pytest.mark.parametrize("text", _cases("wrapper-over-a-users-bug"))
def test_a_wrapper_over_a_users_bug_is_not_the_environment(catalog, text):
    # The wrapper is raised in a library's frames (alone it reads unknown-environment), but it only echoes the bug.
    result = explain([text], catalog)
    assert result.verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert [e.root.short_type for e in result.errors if not e.wrapper] == ["NameError"]
    assert any(e.wrapper for e in result.errors)


def test_a_wrapper_alone_keeps_its_own_verdict(catalog):
    # vllm-project/vllm#11994 as posted: nothing above the wrapper, so nothing names the failure and nothing clears it.
    text = ('  File "/usr/local/lib/python3.11/dist-packages/vllm/entrypoints/openai/api_server.py", line 223, in '
            "build_async_engine_client_from_engine_args\n    raise RuntimeError(\n"
            "RuntimeError: Engine process failed to start. See stack trace for the root cause.\n")
    result = explain([text], catalog)
    (error,) = result.errors
    assert error.wrapper and result.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and not result.known


def test_a_logged_import_failure_above_a_wrapper_is_its_root(catalog):
    # sgl-project/sglang#11969's logged import failure, then vllm-project/vllm#11994's wrapper: the wrapper is no failure
    # of its own, so the logged line is not dropped as a skipped optional import beside a real error.
    text = ("[2025-10-26 14:54:00 TP3 EP3] Ignore import error when loading sglang.srt.models.glm4v_moe: "
            "No module named 'transformers.models.glm4v_moe'\n"
            "RuntimeError: Engine process failed to start. See stack trace for the root cause.\n")
    result = explain([text], catalog)
    assert [(e.root.short_type, e.wrapper) for e in result.errors] == [("ModuleNotFoundError", False), ("RuntimeError", True)]


def test_a_logged_import_failure_beside_a_real_error_still_gives_way(catalog):
    # The same logged line beside an error that is not an echo (SYSTRAN/faster-whisper#653's): that error is the failure.
    text = ("[2025-10-26 14:54:00 TP3 EP3] Ignore import error when loading sglang.srt.models.glm4v_moe: "
            "No module named 'transformers.models.glm4v_moe'\n"
            "RuntimeError: CUDA failed with error forward compatibility was attempted on non supported HW\n")
    assert [e.root.short_type for e in explain([text], catalog).errors] == ["RuntimeError"]
