"""Root errors and verdicts: every distinct error of a log, innermost cause first, on both engines."""

from __future__ import annotations

import dataclasses
import json

import pytest

from compat.explain.match import explain
from compat.explain.normalize import body, joined, masked, stream
from compat.explain.owners import package_of
from compat.explain.roots import ErrorKind
from compat.explain.scan import Engine, hyperscan_available
from compat.explain.verdict import Clue, ErrorVerdict
from compat.explain.versions import Change, check, stated_versions
from compat.report.explain import render_json, render_text
from tests.explain.test_explain import _facts
from tests.support.paths import LOGS

ROOTS = LOGS / "roots"
ENGINES = [Engine.PYTHON, pytest.param(Engine.HYPERSCAN, marks=pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan"))]


@pytest.fixture(params=ENGINES)
def run(request, catalog):
    def go(name, facts=None, *, by_line=False):
        data = (ROOTS / name).read_bytes()
        blocks = data.decode().splitlines(keepends=True) if by_line else [data]
        return explain(blocks, catalog, facts, engine=request.param)

    return go


def test_a_wrapped_error_line_is_read_as_one(run):
    for by_line in (False, True):
        result = run("wrapped-line.log", by_line=by_line)
        assert result.matches[0].signature.id == "gpu-arch-not-in-torch-build"
        assert result.matches[0].lines[0].text == "RuntimeError: CUDA error: no kernel image is available for execution on the device"
        (error,) = result.errors
        assert error.verdict is ErrorVerdict.KNOWN and error.signatures == ("gpu-arch-not-in-torch-build",)
        assert error.root.innermost is not None and error.root.innermost.package == "torch"


def test_the_import_error_inside_a_lazy_import_wrapper_is_the_root(run):
    result = run("lazy-import-nested.log")
    (error,) = result.errors
    assert [r.short_type for r in error.chain] == ["ImportError", "RuntimeError"]
    assert error.root.message.startswith("cannot import name 'libdevice'")
    assert error.root.innermost is not None and error.root.innermost.package == "liger_kernel"
    # The nested error is the root: the catalog names it (Triton moved libdevice), the class it belongs to comes
    # after it, the wrapper last.
    assert not error.wrapper and error.signatures == (
        "triton-libdevice-moved", "import-name-missing-from-installed-package", "transformers-lazy-import-failed")
    assert error.verdict is ErrorVerdict.KNOWN and Clue.IMPORT in error.clues
    assert [p.name for p in error.packages][:2] == ["liger_kernel", "transformers"]
    assert result.verdict is ErrorVerdict.KNOWN


def test_a_wrapper_message_alone_still_yields_its_nested_error(run):
    result = run("lazy-import-message-only.log")
    (error,) = result.errors
    assert error.root.message.endswith("undefined symbol: _ZN3c104cuda9SetDeviceEi")
    assert error.signatures == ("flash-attn-abi-undefined-symbol", "extension-built-for-another-torch",
                                "shared-object-undefined-symbol", "transformers-lazy-import-failed")
    assert result.matches[0].signature.id == "flash-attn-abi-undefined-symbol" and result.verdict is ErrorVerdict.KNOWN


def test_a_chained_exception_is_one_error_cause_first(run):
    result = run("chained.log")
    (error,) = result.errors
    assert [(r.type, r.line) for r in error.chain] == [("KeyError", 4), ("ValueError", 13)]
    assert error.first_line == 1 and error.root.innermost is not None and error.root.innermost.file == "/workspace/reward.py"
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT and result.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_three_root_errors_of_three_ranks_and_the_launcher_last(run):
    result = run("three-roots.log")
    roots = [e for e in result.errors if not e.wrapper]
    # An out-of-memory with no vLLM in the log is the run's settings (cuda-oom-generic is a usage entry): the NCCL
    # timeout it left on another rank ranks first.
    assert [(e.root.short_type, e.verdict) for e in roots] == [
        ("NCCL", ErrorVerdict.KNOWN), ("OutOfMemoryError", ErrorVerdict.KNOWN_USAGE), ("KeyError", ErrorVerdict.NOT_ENVIRONMENT),
    ]
    assert roots[1].signatures == ("cuda-oom-generic",) and roots[0].kind is ErrorKind.NCCL
    assert roots[2].root.innermost is not None and roots[2].root.innermost.file == "/workspace/data.py"
    launcher = result.errors[-1]
    assert launcher.wrapper and launcher.root.short_type == "ChildFailedError" and launcher.signatures == ("torch-elastic-child-failed",)
    assert result.verdict is ErrorVerdict.KNOWN


def test_nccl_info_lines_alone_match_nothing(run):
    result = run("nccl-info-only.log")
    assert result.matches == () and result.errors == () and not result.known


def test_a_users_own_bug_is_not_an_environment_failure(catalog):
    result = explain([(LOGS / "negative" / "dataset-keyerror.log").read_bytes()], catalog)
    (error,) = result.errors
    assert error.root.type == "KeyError" and error.verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert result.verdict is ErrorVerdict.NOT_ENVIRONMENT
    text = render_text(result)
    assert "Verdict: not an environment failure compat recognises (not-environment)." in text


def test_an_unknown_cuda_error_is_an_unknown_environment_failure(run):
    env = _facts({"torch": "2.7.1", "vllm": "0.10.1"})
    result = run("unknown-cuda.log", env)
    (error,) = result.errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and error.clues == (Clue.CUDA,)
    assert [(p.name, p.version) for p in error.packages] == [("torch", "2.7.1"), ("vllm", "0.10.1")]
    assert result.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and not result.known
    text = render_text(result)
    assert "Verdict: an environment failure compat cannot name (unknown-environment)." in text
    assert "packages in the frames: torch 2.7.1, vllm 0.10.1" in text and "CUDA_LAUNCH_BLOCKING=1" in text
    doc = json.loads(render_json(result))
    assert doc["verdict"] == "unknown-environment" and doc["errors"][0]["verdict"] == "unknown-environment"
    assert doc["errors"][0]["chain"][0]["frames"][-1]["package"] == "torch"


def test_stated_versions_are_checked_against_the_facts(run):
    env = dataclasses.replace(_facts({"tokenizers": "0.21.0"}), python=dataclasses.replace(_facts({}).python, glibc="2.31"))
    result = run("stated-versions.log", env)
    glibc, tokenizers = (e.versions[0] for e in result.errors)
    assert (glibc.subject, glibc.wanted, glibc.by, glibc.installed, glibc.satisfied, glibc.change) == (
        "glibc", ">=2.32", "flash_attn_2_cuda", "2.31", False, Change.ARTEFACT)
    assert (tokenizers.subject, tokenizers.wanted, tokenizers.found, tokenizers.installed, tokenizers.satisfied, tokenizers.change) == (
        "tokenizers", ">=0.19,<0.20", "0.21.0", "0.21.0", False, Change.INSTALLED)
    assert all(e.verdict is not ErrorVerdict.NOT_ENVIRONMENT and Clue.VERSION in e.clues for e in result.errors)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may crash.", ("numpy", "==1.*", "2.0.0", None)),
        ("vllm 0.7.2 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible.", ("torch", "==2.5.1", "2.6.0", "vllm")),
        ("PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1. Please reinstall", ("cuda", "==11.8", "12.1", "torchvision")),
        ("xformers was built for PyTorch 2.4.0+cu121 with CUDA 1201 (you have 2.5.1+cu124)", ("torch", "==2.4.0+cu121", "2.5.1+cu124", None)),
        ("flash-attn requires torch>=2.4 but found 2.3.1", ("torch", ">=2.4", "2.3.1", None)),
        ("The cluster was started with:\n    Ray: 2.9.0\n    Python: 3.10.12\nThis process on node 10.0.0.1 was started with:\n    Ray: 2.10.0\n",
         ("ray", "==2.9.0", "2.10.0", None)),
        ("The NVIDIA driver on your system is too old (found version 11040).", ("nvidia-driver", "", "11.4", None)),
    ],
)
def test_stated_version_wordings(text, expected):
    (sv,) = stated_versions(text)
    assert (sv.subject, sv.wanted, sv.found, sv.by) == expected
    # Without facts nothing is installed or satisfied: the message is all there is.
    assert dataclasses.replace(check(sv, None), command=None) == sv


def test_normalisation_helpers():
    assert body("[rank0]:   File \"x.py\", line 3, in f") == '  File "x.py", line 3, in f'
    assert stream("(RayWorker pid=77, ip=10.0.0.2) boom") == "pid77" and stream("[rank3]: x") == "rank3" and stream("x") == ""
    assert masked("rank 3 at 0x7f00") == "rank N at N"
    assert joined(["on the", "device"]) == ("on the device", "on thedevice") and joined(["one"]) == ("one",)
    assert package_of("/usr/lib/python3/dist-packages/vllm/x.py") == "vllm" and package_of("/home/me/train.py") is None


def test_repeated_ranks_collapse_into_one_error_with_a_count(catalog):
    line = "[rank{}]: RuntimeError: CUDA error: misaligned address\n"
    result = explain(["".join(line.format(r) for r in range(8))], catalog)
    (error,) = result.errors
    assert error.count == 8 and error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pattern_on_every_line_stops_costing_after_its_budget(catalog, engine):
    from compat.explain.scan import LINE_CAP

    info = "node-0:1024:2048 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
    hang = (LOGS / "nccl-watchdog-timeout.log").read_text().splitlines()[0] + "\n"
    result = explain([info * (LINE_CAP + 500), hang], catalog, engine=engine)
    p2p = next(m for m in result.matches if m.signature.id == "nccl-p2p-hang-pcie")
    assert p2p.occurrences == LINE_CAP and p2p.lines[0].count == LINE_CAP
    assert result.lines_scanned == LINE_CAP + 501 and result.verdict is ErrorVerdict.KNOWN


def test_the_compiled_automaton_is_kept_between_runs(catalog):
    pytest.importorskip("hyperscan")
    from compat.explain import match

    class Store(dict):
        def get(self, name):
            return super().get(name)

        def put(self, name, data):
            self[name] = data

    store = Store()
    match._SCANNERS.clear()
    first = explain([(ROOTS / "three-roots.log").read_bytes()], catalog, engine=Engine.HYPERSCAN, store=store)
    assert len(store) == 1 and all(name.startswith("hyperscan-") for name in store)
    match._SCANNERS.clear()
    again = explain([(ROOTS / "three-roots.log").read_bytes()], catalog, engine=Engine.HYPERSCAN, store=store)
    assert again == first and len(store) == 1
    store[next(iter(store))] = b"damaged"
    match._SCANNERS.clear()
    assert explain([(ROOTS / "three-roots.log").read_bytes()], catalog, engine=Engine.HYPERSCAN, store=store) == first


def test_a_progress_bar_only_on_a_terminal_for_a_large_log(monkeypatch):
    import sys

    from compat.cli import explain as cli

    with cli._progress("x.log", cli.PROGRESS_MIN_BYTES) as progress:
        assert progress is None  # pytest's stderr is no terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with cli._progress("x.log", cli.PROGRESS_MIN_BYTES - 1) as progress:
        assert progress is None
    with cli._progress("x.log.gz", cli.PROGRESS_MIN_BYTES) as progress:
        assert progress is not None
        progress(1024)


def test_a_cpp_exception_with_its_libraries(run):
    result = run("cpp-terminate.log")
    (error,) = result.errors
    assert error.kind is ErrorKind.CPP and error.root.type == "c10::Error"
    assert error.root.message.startswith("CUDA error: an illegal memory access was encountered")
    assert [f.package for f in error.root.frames] == ["torch", "torch"]
    assert error.root.frames[-1].file.endswith("libc10.so")  # innermost last, as Python prints frames
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT and Clue.CUDA in error.clues


def test_colours_are_removed_sparse_or_dense_and_a_lone_escape_is_kept():
    from compat.explain.normalize import strip_ansi

    assert strip_ansi(b"plain\n") == b"plain\n"
    assert strip_ansi(b"a \x1b[1;31mRuntimeError\x1b[0m: x\n\x1b]0;title\x07b \x1b lone\n") == b"a RuntimeError: x\nb \x1b lone\n"
    dense = b"\x1b[32m50%\x1b[0m|\x1b[33mbar\x1b[0m \x1b[2K\n" * 5000
    assert strip_ansi(dense) == b"50%|bar \n" * 5000


@pytest.mark.parametrize("odd", [b"", b"\x1b[2K", b"\x1b]0;title\x07", b"\x1b lone", b"\x1b\x1b[0m[31m"])
def test_a_large_block_of_sparse_colours_loses_what_the_two_passes_remove(odd):
    """A block of 64 KB or more whose escapes are sparse is stripped escape by escape when all are colours, and by the
    two regex passes when one is anything else (`odd`): the same bytes either way."""
    from compat.explain.normalize import _SGR_BYTES, ANSI_BYTES, strip_ansi

    line = b"\x1b[33m2025-06-12 10:00:01\x1b[0m WARNING: `use_cache=True` is incompatible" + b" ." * 900 + b"\n"
    block = line * 40 + b"tail " + odd + b" end\n" + line * 40
    assert len(block) >= 64 * 1024
    once = _SGR_BYTES.sub(b"", block)
    expected = ANSI_BYTES.sub(b"", once) if b"\x1b" in once else once
    assert strip_ansi(block) == strip_ansi(bytearray(block)) == expected
    assert b"\x1b[33m" not in strip_ansi(block) and strip_ansi(block).count(b"\n") == block.count(b"\n")


@pytest.mark.parametrize(("path", "owner"), [
    ("/kaggle/working/unsloth_compiled_cache/unsloth_compiled_module_qwen2_vl.py", "unsloth"),
    ("/root/.cache/huggingface/modules/transformers_modules/DNABERT-2-117M/bert_layers.py", "transformers_modules"),
    (r"C:\Users\me\.cache\huggingface\modules\transformers_modules\phi\modeling_phi.py", "transformers_modules"),
])
def test_code_a_package_generated_for_the_user_is_not_the_users_own(catalog, path: str, owner: str) -> None:
    assert package_of(path) == owner
    log = ("Traceback (most recent call last):\n"
           '  File "/home/me/train.py", line 9, in <module>\n'
           "    model(**batch)\n"
           f'  File "{path}", line 708, in forward\n'
           "    x = self.config.pad_token_id\n"
           "AttributeError: 'BertConfig' object has no attribute 'pad_token_id'\n")
    (error,) = explain([log], catalog).errors
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT
    assert error.chain[0].raiser is not None and error.chain[0].raiser.package == owner


@pytest.mark.parametrize(("path", "owner"), [
    ("vllm/v1/engine/core.py", "vllm"),  # vLLM V1 tracebacks as bug reports paste them, site-packages trimmed
    ("./torch/cuda/__init__.py", "torch"),
    ("vllm/examples/offline_inference.py", None),  # a checkout's example: the user's program
    ("datasets/coco.py", None),  # a folder programs name their own code
    ("src/train.py", None),
])
def test_a_relative_path_in_a_packages_own_folder_is_that_packages(catalog, path: str, owner: str | None) -> None:
    assert package_of(path) == owner
    log = ("Traceback (most recent call last):\n"
           f'  File "{path}", line 714, in run_engine_core\n'
           "    for i, req_id in enumerate(cached.req_ids):\n"
           "AttributeError: 'list' object has no attribute 'req_ids'\n")
    (error,) = explain([log], catalog).errors
    assert (error.verdict is ErrorVerdict.NOT_ENVIRONMENT) is (owner is None)


def test_a_paste_cut_of_its_site_packages_prefix_makes_every_folder_a_package(catalog) -> None:
    """One frame in a stack package's folder printed relative (`vllm/...`) says the prefix was cut from every frame: a
    plugin's folder beside it (`kvplugin/...`) is an installed package too, while a bare script stays the user's."""
    from compat.explain.roots import trimmed_paste

    def error(*paths: str):
        frames = "".join(f'File "{p}", line 9, in f\n    x = cached.req_ids\n' for p in paths)
        (e,) = explain([frames + "AttributeError: 'list' object has no attribute 'req_ids'\n"], catalog).errors
        return e

    assert error("vllm/v1/core/sched/scheduler.py", "kvplugin/integration/adapter.py").verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT
    assert error("kvplugin/integration/adapter.py").verdict is ErrorVerdict.NOT_ENVIRONMENT  # nothing says it was cut
    assert error("vllm/v1/core/sched/scheduler.py", "train.py").verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert error("vllm/v1/core/sched/scheduler.py", "src/mylib/loop.py").verdict is ErrorVerdict.NOT_ENVIRONMENT
    assert trimmed_paste(()) == ()


def test_an_import_failure_a_logger_printed_without_its_type_is_an_import_error(run):
    # Lines of sgl-project/sglang#11969 and sgl-project/sglang#12827: sglang logs the model modules it skips with the
    # import error's message alone. The import error is the error, whatever the logger's words around it; a source
    # line that raises one is not a report of one.
    for by_line in (False, True):
        result = run("logged-import-failure.log", by_line=by_line)
        roots = {(e.root.short_type, e.root.message) for e in result.errors}
        assert roots == {("ModuleNotFoundError", "No module named 'custom_ops'"),
                         ("ModuleNotFoundError", "No module named 'transformers.models.glm4v_moe'")}
        glm = next(e for e in result.errors if "glm4v_moe" in e.root.message)
        assert Clue.IMPORT in glm.clues and glm.verdict is not ErrorVerdict.NOT_ENVIRONMENT


def test_a_logged_import_failure_gives_way_to_an_error_the_log_shows(run):
    # unslothai/unsloth#2476 (the skipped optional trainers unsloth logs and goes on from) and unslothai/unsloth#1328
    # (the error that stopped the run): a logged import failure is the error only where nothing else failed.
    result = run("logged-import-beside-an-error.log")
    assert [(e.root.short_type, e.root.message) for e in result.errors] == [
        ("ImportError", "Unsloth: Cannot import unsloth_compiled_cache/Conv3d.py")]


def test_a_lazy_import_failing_inside_another_yields_the_innermost_error(run):
    # huggingface/transformers#28275: modeling_utils failed because generation.utils failed because a compiled
    # extension does not load; the error is the innermost, not the second wrapper's message.
    result = run("lazy-import-twice-nested.log")
    (error,) = result.errors
    assert error.root.message.startswith("/usr/local/lib/python3.8/dist-packages/transformer_engine_extensions")
    assert "extension-built-for-another-torch" in error.signatures and result.verdict is ErrorVerdict.KNOWN


@pytest.mark.parametrize(("line", "etype", "starts"), [
    # hiyouga/LlamaFactory#6757, its title: the error quoted right after Chinese words, with no space before its type.
    ("训练时报错ValueError: Some keys are not used by the HfArgumentParser: ['trust_remote_code']\n", "ValueError",
     "Some keys are not used"),
    # echonoshy/cgft-llm#5: the same, inside a sentence that goes on after the error.
    ("llamafactory-cli chat cust/train_llama3_lora_sft.yaml命令出现ValueError: Some keys are not used by the HfArgumentParser: "
     "['do_train', 'output_dir']的问题\n", "ValueError", "Some keys are not used"),
])
def test_an_error_quoted_inside_words_without_spaces_is_read(catalog, line: str, etype: str, starts: str) -> None:
    # Scripts without spaces between words (Chinese, Japanese) put the exception's type right after a word: it is
    # still the error the paste reports, not text around one. A name that merely ends in Error after an ASCII letter
    # (`MyValueError: x` inside `myMyValueError`) is not split.
    (error,) = explain([line.encode()], catalog).errors
    assert (error.root.short_type, error.root.message.startswith(starts)) == (etype, True)
    assert all(e.root.short_type != "ValueError" for e in explain([b"see theValueError: nothing\n"], catalog).errors)


# run-llama/llama_index#17428: Colab's traceback without links, `/path/file.py in function(args)` with no line number.
_COLAB_PLAIN = """---------------------------------------------------------------------------
ImportError                               Traceback (most recent call last)
/usr/local/lib/python3.10/dist-packages/transformers/utils/import_utils.py in _get_module(self, module_name)
   1777         try:
-> 1778             return importlib.import_module("." + module_name, self.__name__)
   1779         except Exception as e:

20 frames
/usr/lib/python3.10/importlib/__init__.py in import_module(name, package)
    125             level += 1
--> 126     return _bootstrap._gcd_import(name[level:], package, level)
    127

/usr/lib/python3.10/importlib/_bootstrap.py in _gcd_import(name, package, level)

/usr/local/lib/python3.10/dist-packages/transformers/trainer.py in <module>
    225 if is_peft_available():
--> 226     from peft import PeftModel
    227
"""


def test_a_colab_frame_without_its_link_is_read(catalog) -> None:
    (error,) = explain([_COLAB_PLAIN.encode()], catalog).errors
    frames = error.root.frames
    assert [(f.function, f.package) for f in frames][-1] == ("<module>", "transformers")
    assert frames[0].file.endswith("transformers/utils/import_utils.py") and frames[0].line is None
    assert error.verdict is not ErrorVerdict.NOT_ENVIRONMENT
    # Prose naming a file is no frame: the path must start the line.
    assert not explain([b"see /home/me/train.py in main(x) for the error\nValueError: x\n"], catalog).errors[0].root.frames


def test_a_bare_exception_ends_its_traceback(run):
    # `raise Exception(...)` in DeepSpeed's loss scaler (lines from deepspeedai/DeepSpeedExamples#419): the exception line
    # names no subclass, and the traceback still ends there, not "without its exception line".
    (error,) = run("bare-exception.log").errors
    assert (error.root.type, error.first_line) == ("Exception", 1)
    assert error.root.message.startswith("Current loss scale already at minimum")
    assert error.root.innermost is not None and error.root.innermost.package == "deepspeed"
