"""What compat writes: files (-o), standard output that cannot take it, and secrets by value shape.

Every case ends in the file written as people expect, a one-line error (exit 2) that leaves the
target as it was, or a quiet end: never a clobbered device, a replaced symlink, exit 3 or 120, or a
secret in a report.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from compat.model.facts import dump_facts
from compat.redact import redact_text, secret_name
from compat.sources.probe.launch import kept_env
from tests.fault.fakes import REPO, compat_cli, one_line_error
from tests.fault.inputs import facts_with
from tests.support.main import compat_main

LOCK = ("lock", "torch", "--gpus", "cpu", "--python-version", "3.11")


# ------------------------------------------------------------------ -o


def test_a_lock_is_0644_under_umask_022(tmp_path):
    out = tmp_path / "requirements.txt"
    code = f"import os, sys; os.umask(0o022); sys.argv = ['compat', *{list(LOCK)!r}, '-o', {str(out)!r}]; " \
           "from compat.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert out.read_text().startswith("# compat lock torch")


@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "read-only"])
def test_o_refuses_what_is_not_a_writable_regular_file_and_leaves_it(tmp_path, kind):
    if kind == "device":
        target = os.devnull
    elif kind == "fifo":
        target = str(tmp_path / "pipe")
        os.mkfifo(target)
    elif kind == "directory":
        target = str(tmp_path)
    else:
        target = str(tmp_path / "lock.txt")
        with open(target, "w") as handle:
            handle.write("keep\n")
        os.chmod(target, 0o444)
    before = os.lstat(target)
    # Only a child's timeout bounds an open of a FIFO that blocks; the other refusals are main's, in any process.
    result = compat_cli(*LOCK, "-o", target, timeout=60) if kind == "fifo" else compat_main(*LOCK, "-o", target)
    assert result.returncode == 2
    line = one_line_error(result)
    assert line.startswith(f"compat: error: cannot write {target}: ")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino, after.st_size) == (before.st_mode, before.st_ino, before.st_size)


def test_o_follows_a_symlink_and_keeps_the_target_mode(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    real.chmod(0o600)
    link = tmp_path / "requirements.txt"
    link.symlink_to(real)
    result = compat_main(*LOCK, "-o", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and real.read_text().startswith("# compat lock torch")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


# ------------------------------------------------------------------ standard output


def test_a_full_stdout_is_one_line_and_exit_2_not_120():
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "compat", *LOCK], stdout=full, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert result.returncode == 2
    assert one_line_error(result) == "compat: error: cannot write the output: No space left on device"


def test_a_reader_that_leaves_ends_compat_quietly():
    with subprocess.Popen([sys.executable, "-m", "compat", *LOCK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "PYTHONPATH": str(REPO)}) as child:
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # `| head -0`
        err = child.stderr.read()
        assert child.wait(timeout=60) == 0
    assert err == b""


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_stdout_that_cannot_encode_every_character_gets_question_marks_not_exit_3(tmp_path, encoding):
    # doctor's report has '·' and '✗'; a console that cannot write them (cp1252, PYTHONIOENCODING) is no bug of compat
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("trl==0.15.2\n")
    for args in (("doctor", "-r", str(requirements), "--gpus", "1xH100", "--driver", "550.54.15", "--no-config"),
                 ("matrix", "show", "trl")):
        result = compat_cli(*args, env={"PYTHONIOENCODING": encoding}, timeout=60)
        assert result.returncode in (0, 1), result.stderr[-300:]
        assert result.stderr == b""
        if args[0] == "doctor":
            assert b"?" in result.stdout
            result.stdout.decode(encoding)  # nothing the stream could not hold


@pytest.mark.parametrize("closed", [">&-", "<&-", ">&- 2>&-"])
def test_a_closed_standard_stream_is_the_null_device_not_exit_3(tmp_path, closed):
    # Python leaves sys.stdout None when descriptor 1 is closed: every write was an AttributeError (exit 3)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("trl==0.15.2\n")
    out = tmp_path / "lock.txt"
    script = (f'"$0" -m compat doctor -r {requirements} --gpus 1xH100 --driver 550.54.15 --no-config {closed}; echo "doctor $?" >&3;'
              f'"$0" -m compat explain --no-env {closed}; echo "explain $?" >&3;'
              f'"$0" -m compat lock torch --gpus cpu --python-version 3.11 -o {out} {closed}; echo "lock $?" >&3')
    result = subprocess.run(["sh", "-c", f"exec 3>&1; {{ {script}; }} 2>&1 >/dev/null", sys.executable],
                            capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    said = result.stdout.decode()
    assert "Traceback" not in said and "internal error" not in said, said
    assert {line.split()[0]: line.split()[1] for line in said.splitlines() if line.split()[0] in ("doctor", "explain", "lock")} \
        == {"doctor": "1", "explain": "1", "lock": "0"}, said
    assert out.read_text().startswith("# compat lock torch")  # the lock went to its file, not to descriptor 1


def test_the_fleet_gatherer_with_a_closed_stdout_ends_quietly():
    result = subprocess.run(["sh", "-c", '"$0" -m compat.fleet --help >&-', sys.executable], capture_output=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert result.returncode == 0 and result.stderr == b"", result.stderr[-300:]  # was exit 120 and two tracebacks


# ------------------------------------------------------------------ secrets by value shape


@pytest.mark.parametrize("text, secret", [
    ("https://hub.example/file?token=tok3n-v4lue&x=1", "tok3n-v4lue"),
    ("https://hub.example/file?access_token=abc123def", "abc123def"),
    ("https://bucket.s3.example/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=0a1b2c3d4e", "0a1b2c3d4e"),
    ("https://acct.blob.example/c/o?sv=2024&sig=Zm9vYmFy%3D", "Zm9vYmFy%3D"),
    ("curl -H 'Authorization: Bearer abc.def.ghi-jkl'", "abc.def.ghi-jkl"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("got bearer s3cretValue99 back", "s3cretValue99"),
    ("https://alice:pw@proxy.example:3128", "alice:pw"),
])
def test_secrets_are_masked_by_their_shape(text, secret):
    masked = redact_text(text)
    assert secret not in masked and "***" in masked


def test_plain_text_that_only_resembles_a_secret_is_kept():
    for text in ("a basic training run", "key=value in a config", "https://index.example/simple/?page=2"):
        assert redact_text(text) == text


def test_a_bearer_variable_is_a_secret_by_name():
    assert secret_name("MY_SERVICE_BEARER")
    assert "MY_SERVICE_BEARER" not in kept_env({"MY_SERVICE_BEARER": "plain", "VLLM_HOST": "h"})


SHAPED = {
    "NCCL_DEBUG_FILE": "https://hub.example/x?token=SECRETaaa111",
    "VLLM_HEADERS": "Authorization: Bearer SECRETbbb222",
    "TORCH_HOME": "https://s3.example/o?X-Amz-Signature=SECRETccc333",
}


def test_secrets_by_value_never_reach_facts_doctor_json_or_a_fleet_report(tmp_path):
    facts = tmp_path / "node1.json"
    facts.write_text(dump_facts(facts_with(env=SHAPED)))
    out = tmp_path / "out.json"
    report = tmp_path / "report.json"
    runs = [
        compat_main("facts", "--facts", str(facts), "-o", str(out)),
        compat_main("facts", "--facts", str(facts)),
        compat_main("doctor", "--facts", str(facts), "--json", "--no-config"),
        compat_main("fleet", str(tmp_path), "--json"),
    ]
    facts.unlink()
    seen = b"".join(r.stdout + r.stderr for r in runs) + out.read_bytes()
    assert all(r.returncode in (0, 1) for r in runs), [r.stderr[-300:] for r in runs]
    for secret in (b"SECRETaaa111", b"SECRETbbb222", b"SECRETccc333"):
        assert secret not in seen
    assert b"Traceback" not in seen and not report.exists()


# ------------------------------------------------------------------ signals end the children


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_compat_ends_its_probe_children(tmp_path, signum):
    pidfile = tmp_path / "child.pid"
    code = (
        "from compat.sources.children import end_children_on_signals\n"
        "from compat.sources.probe._run import run\n"
        "end_children_on_signals()\n"
        f"run(['sh', '-c', 'echo $$ > {pidfile}; exec sleep 60'], timeout=60)\n"
    )
    # The signal's default action, whatever the suite inherited: under nohup SIGHUP is ignored, and compat rightly
    # leaves an ignored signal ignored (that run's compat would outlive the hangup, as nohup asks).
    parent = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                              preexec_fn=lambda: signal.signal(signum, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    child = int(pidfile.read_text())
    parent.send_signal(signum)
    assert parent.wait(timeout=30) == -signum  # ended as the signal ends it, after the children
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the probe child outlived compat"
        time.sleep(0.05)


def test_a_signal_while_a_child_is_being_started_ends_it_once_it_is_registered(tmp_path):
    # The signal lands after the fork and before the registration; acted on at once, it would find no child to kill
    # and the child would outlive compat. It waits for the registration.
    pidfile = tmp_path / "child.pid"
    code = (
        "import os, signal, subprocess\n"
        "from compat.sources import children\n"
        "children.end_children_on_signals()\n"
        "def start():\n"
        "    proc = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        f"    open({str(pidfile)!r}, 'w').write(str(proc.pid))\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return proc\n"
        "children.spawn(start).wait()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                              preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    assert parent.wait(timeout=30) == -signal.SIGTERM
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(child):
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            pytest.fail("a child started during the signal outlived compat")
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
