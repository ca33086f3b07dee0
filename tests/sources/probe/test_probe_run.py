import sys
import time

from compat.sources.probe._run import Outcome, run


def test_success_captures_output():
    r = run([sys.executable, "-c", "print('hi'); import sys; print('err', file=sys.stderr)"], timeout=30)
    assert r.ok and r.stdout == "hi\n" and r.stderr == "err\n" and r.problem is None


def test_missing_binary():
    r = run(["/nonexistent/tool"], timeout=5)
    assert not r.ok and r.problem == "tool not found" and r.outcome is Outcome.NOT_FOUND


def test_nonzero_exit_names_the_last_stderr_line():
    r = run([sys.executable, "-c", "import sys; sys.exit('boom happened')"], timeout=30)
    assert r.returncode == 1 and r.problem.endswith("exited with status 1: boom happened")


def test_signal():
    r = run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGABRT)"], timeout=30)
    assert r.returncode < 0 and r.problem.endswith("was killed by SIGABRT")


def test_hang_kills_the_whole_group(tmp_path):
    marker = tmp_path / "child-survived"
    grandchild = tmp_path / "grandchild.py"
    grandchild.write_text(f"import time\ntime.sleep(2)\nopen({str(marker)!r}, 'w').close()\n")
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, {str(grandchild)!r}])\n"
        "time.sleep(60)\n"
    )
    r = run([sys.executable, str(parent)], timeout=0.5)
    assert r.timed_out and r.problem == f"{r.name} timed out after 0.5 s"
    time.sleep(2.5)  # the grandchild would have written the marker by now had it survived
    assert not marker.exists()


def test_undecodable_output_is_replaced():
    r = run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xff\\xfeok')"], timeout=30)
    assert r.ok and r.stdout.endswith("ok") and "\ufffd" in r.stdout


def test_a_file_that_is_not_executable(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    result = run([str(script)], timeout=5)
    assert (result.returncode, result.error) == (None, "tool is not executable")
    assert result.problem == "tool is not executable"


def test_a_directory_cannot_be_started(tmp_path):
    result = run([str(tmp_path)], timeout=5)
    assert result.returncode is None and result.error is not None
    assert result.error.startswith(tmp_path.name)


def test_an_unknown_signal_number_is_still_named():
    from compat.sources.probe._run import RunResult

    assert RunResult(argv=("x",), returncode=-99, stdout="", stderr="").problem == "x was killed by signal 99"


def test_marked_json_takes_the_last_marked_object():
    from compat.sources.probe._run import RunResult, marked_json

    def out(text: str) -> RunResult:
        return RunResult(argv=("py",), returncode=0, stdout=text, stderr="")

    assert marked_json(out('@@ {"a": 1}\nnoise\n@@ {"a": 2}\n'), "@@ ") == {"a": 2}
    assert marked_json(out("@@ [1, 2]\n"), "@@ ") is None
    assert marked_json(out("@@ {not json\n"), "@@ ") is None
    assert marked_json(out('{"a": 1}\n'), "@@ ") is None


def test_a_child_that_allocates_without_bound_fails_on_its_own():
    # 1 GiB asked for under a 256 MiB data limit: the child's MemoryError, not the host's OOM killer. The limit is set
    # from outside just after the child starts (_run._limit_memory: before a real probe has imported anything); this
    # child allocates at once, so it first waits (up to 10 s) for its limit to be set, or a loaded CI machine can
    # run it to the allocation first.
    grab = ("import resource, sys, time\nend = time.monotonic() + 10\n"
            "while resource.getrlimit(resource.RLIMIT_DATA)[0] == resource.RLIM_INFINITY and time.monotonic() < end:\n"
            "    time.sleep(0.001)\n"
            "try:\n    b = bytearray(2**30)\nexcept MemoryError:\n    sys.exit('MemoryError')\nprint('allocated')")
    limited = run([sys.executable, "-c", grab], timeout=60, max_memory=256 * 2**20)
    assert limited.returncode == 1 and limited.problem == f"{limited.name} exited with status 1: MemoryError"
    free = run([sys.executable, "-c", grab], timeout=60)  # the default bound leaves room for real probes
    assert free.ok and free.stdout.strip() == "allocated"
