import sys
import time

from compat.sources.probe._run import run


def test_success_captures_output():
    r = run([sys.executable, "-c", "print('hi'); import sys; print('err', file=sys.stderr)"], timeout=30)
    assert r.ok and r.stdout == "hi\n" and r.stderr == "err\n" and r.problem is None


def test_missing_binary():
    r = run(["/nonexistent/tool"], timeout=5)
    assert not r.ok and r.problem == "tool not found"


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
