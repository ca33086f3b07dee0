"""compat's command line run in the test's own process, as a child would run it (tests/fault/fakes.py's
`compat_cli` starts the child)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def compat_main(*args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None,
                stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """`compat ARGS` through `compat.cli.main` in this process: what `compat_cli` returns, without a child's start.

    The same entry a child runs (the one output filter, one-line errors, the exit code), with `env` set, standard
    streams of bytes and the run's private cache; a child costs 0.25-0.4 s of CPU, this 0.01-0.1 s. Keep
    `compat_cli` where the process is the subject: its exit status as the shell sees it, signals, closed or full
    streams and their encodings, environment read at start-up, and anything that could hang (a FIFO, a device,
    a catastrophic pattern, a superlinear rule), which only a child's timeout bounds."""
    import io
    import signal

    import pytest

    from compat import cli

    out, err = io.BytesIO(), io.BytesIO()
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGHUP)}
    debug = cli._debug[0]
    code: int | str | None = 0
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "argv", ["compat", *args])
        streams = (io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
                   io.TextIOWrapper(out, encoding="utf-8", write_through=True),
                   io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True))
        for name, stream in zip(("stdin", "stdout", "stderr"), streams, strict=True):
            patch.setattr(sys, name, stream)
        try:
            cli.main()
        except SystemExit as done:
            code = done.code
        finally:
            cli._debug[0] = debug
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
        if isinstance(code, str):  # as the interpreter does with sys.exit("text")
            streams[2].write(code + "\n")
        result = subprocess.CompletedProcess(["compat", *args], code if isinstance(code, int) else int(code is not None),
                                             out.getvalue(), err.getvalue())
    return result


_BATCH = """
import base64, json, sys
from tests.support.main import compat_main
for line in sys.stdin:
    done = compat_main(*json.loads(line))
    print(json.dumps([done.returncode, base64.b64encode(done.stdout).decode(), base64.b64encode(done.stderr).decode()]),
          flush=True)
"""


def compat_batch(runs: list[list[str]], timeout: float) -> list[subprocess.CompletedProcess[bytes] | None]:
    """Each of `runs` (a `compat` command line) through `compat_main` in ONE child, in order, within `timeout`.

    For cases whose subject a hang could be (a rule superlinear in a line, a pattern that backtracks): a child's
    timeout bounds them all, and the child's start-up (0.25-0.4 s of CPU) is paid once instead of once per case.
    Each result is read as its case ends, so when the child is killed at the timeout the cases it finished keep
    their results and the rest are None."""
    import base64
    import json
    import os

    repo = Path(__file__).resolve().parents[2]
    lines = "".join(json.dumps(args) + "\n" for args in runs)
    env = {**os.environ, "PYTHONPATH": str(repo)}
    try:
        out = subprocess.run([sys.executable, "-c", _BATCH], input=lines.encode(), capture_output=True, env=env,
                             timeout=timeout).stdout
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or b""
    results: list[subprocess.CompletedProcess[bytes] | None] = [None] * len(runs)
    for i, line in enumerate(out.decode().splitlines()[: len(runs)]):
        code, stdout, stderr = json.loads(line)
        results[i] = subprocess.CompletedProcess(runs[i], code, base64.b64decode(stdout), base64.b64decode(stderr))
    return results
