"""Fault fixtures: tools and libraries that hang, crash, lie or never stop talking.

Each fake is a small file written into a temporary directory: a shell script standing for
`nvidia-smi` or `python`, or a `pynvml.py` that the NVML child imports first (through
PYTHONPATH). They are bounded themselves (a "hang" sleeps 30 s at most) so that a test that
fails cannot wedge CI, and compat is given timeouts of 1-2 s.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HANG = "sleep 30"
"""What a hanging tool does (long past any timeout the tests give compat)."""

SHELL_TOOLS = {
    "hang": f"#!/bin/sh\n{HANG}\n",
    "crash": "#!/bin/sh\nkill -SEGV $$\n",
    "endless": "#!/bin/sh\nexec yes 'garbage garbage garbage'\n",
    "garbage": "#!/bin/sh\nprintf '\\033]0;pwned\\007\\377\\376 index, name\\n9999999999999999999999999999, x\\n'\nexit 0\n",
    "fail": "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2\nexit 9\n",
}
"""Shell bodies of a tool that misbehaves in one way each."""


def tool(directory: Path, name: str, behaviour: str) -> Path:
    """An executable called `name` in `directory` that behaves as SHELL_TOOLS[behaviour]."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(SHELL_TOOLS[behaviour])
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def lying_python(directory: Path, report: str) -> Path:
    """A `python` that prints `report` (after the interpreter probe's mark) whatever it is asked."""
    directory.mkdir(parents=True, exist_ok=True)
    body = directory / "report.txt"
    body.write_text("COMPAT-INTERPRETER:" + report + "\n")
    path = directory / "python"
    path.write_text(f"#!/bin/sh\ncat '{body}'\n")
    path.chmod(0o755)
    return path


FAKE_NVML = '''
"""A fake pynvml: FAKE_NVML selects the fault."""
import ctypes, os, time

MODE = os.environ.get("FAKE_NVML", "hang")
NVML_FEATURE_ENABLED = 1
NVML_P2P_CAPS_INDEX_READ = 0
NVML_P2P_STATUS_OK = 0


class NVMLError(Exception):
    pass


def nvmlInit():
    if MODE == "hang":
        time.sleep(30)
    if MODE == "segv":
        ctypes.string_at(0)  # a driver library that dereferences NULL
    if MODE == "abort":
        os.abort()
    if MODE == "chatter":
        while True:
            print("NVML says hello " * 64)


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return {"odd": b"\\xff\\xfe550\\x1b]0;x\\x07", "huge": "9" * 5000}.get(MODE, "550.54.15")


def nvmlSystemGetCudaDriverVersion_v2():
    return {"odd": "twelve", "huge": 10**5000}.get(MODE, 12040)


def nvmlDeviceGetCount():
    return {"odd": 2**40, "huge": 1}.get(MODE, 1)


def nvmlDeviceGetHandleByIndex(i):
    return i


def nvmlDeviceGetName(h):
    return b"NVIDIA H100 80GB HBM3"


def nvmlDeviceGetCudaComputeCapability(h):
    return (10**5000, -1) if MODE == "huge" else (9, 0)


def nvmlDeviceGetMemoryInfo(h):
    class M:
        total = -5 if MODE == "huge" else 85520809984
    return M()


def nvmlDeviceGetPciInfo(h):
    class P:
        busId = b"00000000:18:00.0"
    return P()


def nvmlDeviceGetNvLinkState(h, link):
    raise NVMLError("Not Supported")
'''


def fake_nvml(directory: Path) -> Path:
    """A directory holding the fake pynvml (put it first on PYTHONPATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pynvml.py").write_text(FAKE_NVML)
    return directory


def compat_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 30, cwd: Path | None = None,
               stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """`python -m compat ARGS` in a child, as a user runs it, with this checkout first.

    The child uses this test run's private cache (COMPAT_CACHE_DIR, tests/conftest.py), as a user's second run uses
    theirs: with COMPAT_NO_CACHE each child parsed the whole matrix again (0.8 s of CPU for an explain of one line,
    0.3 s from the cache). tests/fault/test_caches.py is about the cache itself and names its own."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "compat", *args], capture_output=True, timeout=timeout, env=full, cwd=cwd,
        input=stdin if stdin is not None else b"",
    )


class Clock:
    """Measures that a call returned within a bound."""

    def __enter__(self) -> Clock:
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.monotonic() - self.start


def one_line_error(result: subprocess.CompletedProcess[bytes]) -> str:
    """The stderr of a failed run, asserted to be one line without a traceback."""
    err = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]
