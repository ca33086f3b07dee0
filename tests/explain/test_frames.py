"""An entry about one library's failure (`frames = ["trl"]`) fires only where the log shows that library:
its saved real log (which comes with the library's frames) still matches, and the same message raised
from user code alone does not."""

from __future__ import annotations

import re

import pytest

from compat.errors import MatrixError
from compat.explain.match import explain
from compat.matrix.signatures import Signature, frame_pattern, load_signatures
from tests.support.matrix import shipped_matrix
from tests.support.paths import LOGS
from tests.support.signature_entries import GOOD, entry_tables

MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
LIBRARY_ENTRIES = [s for s in MATRIX.signatures if s.frames]

USER_FRAMES = """Traceback (most recent call last):
  File "/home/user/train.py", line 41, in <module>
    main()
  File "/home/user/train.py", line 37, in main
    check(batch)
  File "/home/user/mylib/checks.py", line 12, in check
    raise_it()
"""


def _message_lines(sig: Signature) -> list[str]:
    lines = (LOGS / f"{sig.id}.log").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if any(re.search(p, line, re.ASCII) for p in sig.patterns)]


def _names_library(sig: Signature, line: str) -> bool:
    return any(re.search(rf"\b{name}\b", line, re.IGNORECASE) for name in sig.frames)


def _ids(text: str) -> list[str]:
    return [m.signature.id for m in explain([text], MATRIX).matches]


def test_generic_messages_of_a_library_declare_it() -> None:
    """The entries whose message user code could raise too say whose failure it is (the list may only grow)."""
    assert {"online-dpo-dataparallel-config", "grpo-fsdp-ref-model-on-cpu", "grpo-fsdp2-ref-model-fsdp1-wrapper",
            "transformers-tokenizer-class-unknown", "peft-target-modules-not-found"} <= {s.id for s in LIBRARY_ENTRIES}


@pytest.mark.parametrize("sig", LIBRARY_ENTRIES, ids=lambda s: s.id)
def test_the_saved_real_log_shows_the_library_and_matches(sig: Signature) -> None:
    text = (LOGS / f"{sig.id}.log").read_text(encoding="utf-8")
    assert any(re.search(p, text, re.ASCII) for p in sig.frame_patterns), f"{sig.id}: its real log has no frame of {sig.frames}"
    assert sig.id in _ids(text)


@pytest.mark.parametrize("sig", LIBRARY_ENTRIES, ids=lambda s: s.id)
def test_the_bare_message_in_a_user_only_traceback_does_not_match(sig: Signature) -> None:
    lines = _message_lines(sig)
    assert lines, f"{sig.id}: no line of its real log matches its patterns"
    for line in lines:
        user_only = USER_FRAMES + line + "\n"
        assert (sig.id in _ids(user_only)) is _names_library(sig, line), line


def test_a_matched_line_that_names_the_library_is_enough() -> None:
    sig = next(s for s in LIBRARY_ENTRIES if s.id == "online-dpo-dataparallel-config")
    line = "AttributeError: 'DataParallel' object has no attribute 'config'"
    assert sig.id not in _ids(USER_FRAMES + line + "\n")
    assert sig.id in _ids(USER_FRAMES + line + " (raised in trl's OnlineDPOTrainer)\n")
    log = USER_FRAMES + '  File "/venv/lib/python3.11/site-packages/trl/trainer/online_dpo_trainer.py", line 452\n' + line
    assert sig.id in _ids(log)


@pytest.mark.parametrize(("text", "shown"), [
    ('  File "/venv/lib/python3.11/site-packages/vllm/engine/llm_engine.py", line 3', True),
    ("INFO 05-01 12:00:00 vllm.worker.worker: loading", True),
    (r'  File "C:\venv\Lib\site-packages\vllm\utils.py", line 3', True),
    ('  File "/home/user/myvllm/run.py", line 3', False),
    ("vllm_config = load()", False),
])
def test_a_frame_is_a_path_segment_or_a_dotted_module(text: str, shown: bool) -> None:
    assert bool(re.search(frame_pattern("vllm"), text, re.ASCII)) is shown




@pytest.mark.parametrize(("change", "message"), [
    ({"frames": ["flash-attn"]}, r"signature\[0\]\.frames\[0\]: 'flash-attn' is not an import name"),
    ({"frames": "trl"}, r"signature\[0\]\.frames: expected a list of strings"),
    ({"frames": ["trl"], "patterns": [], "doctor": True}, r"signature\[0\]\.frames: needs `patterns`"),
])
def test_a_bad_frames_list_is_refused_with_file_and_key(change: dict, message: str) -> None:
    with pytest.raises(MatrixError, match=r"^matrix/signatures/x\.toml: " + message):
        load_signatures(entry_tables({**GOOD, **change}))
    (sig,) = load_signatures(entry_tables({**GOOD, "frames": ["trl"]}))
    assert sig.frames == ("trl",) and sig.frame_patterns == (frame_pattern("trl"),)


GENERIC_USAGE = [s for s in MATRIX.signatures if s.generic and s.usage]


def _specialises_usage(sig: Signature) -> list[str]:
    """The generic usage entries that also match the lines of `sig`'s own real log."""
    lines = _message_lines(sig) if (LOGS / f"{sig.id}.log").exists() else []
    return sorted({g.id for g in GENERIC_USAGE for line in lines if any(re.search(p, line, re.ASCII) for p in g.patterns)})


@pytest.mark.parametrize("sig", [s for s in MATRIX.signatures if not s.generic and not s.usage], ids=lambda s: s.id)
def test_an_environment_entry_on_a_usage_message_needs_its_library_shown(sig: Signature) -> None:
    """An out-of-memory or a two-device message is the run's settings unless the library an entry is about shows:
    an environment entry whose lines a generic usage entry also matches must require its context or frames, or it
    would call every user's out-of-memory an environment failure."""
    if _specialises_usage(sig):
        assert sig.context_required or sig.frames, f"{sig.id} matches {_specialises_usage(sig)}'s lines ungated"


def test_an_out_of_memory_outside_vllm_is_the_runs_settings() -> None:
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 196.00 MiB (GPU 0; 15.77 GiB total"
           " capacity; 14.16 GiB already allocated; 150.12 MiB free; 14.57 GiB reserved in total by PyTorch)\n")
    assert _ids(USER_FRAMES + oom) == ["cuda-oom-generic"]
    in_trl = USER_FRAMES + '  File "/venv/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 9\n' + oom
    assert "trl-grpo-vllm-oom" in _ids(in_trl)
