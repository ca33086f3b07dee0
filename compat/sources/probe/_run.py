"""The one subprocess seam of compat: run a command, never raise on a host quirk.

Every external tool compat touches (nvidia-smi, another interpreter, a child that imports
torch) goes through `run`, so a missing binary, a non-zero exit, a hang or a crash by signal
all come back as a `RunResult` whose `problem` is a sentence fit for an `Unknown`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class RunResult:
    argv: tuple[str, ...]
    """The command that was run."""
    returncode: int | None
    """Exit status; negative when killed by a signal; None when it never ran or timed out."""
    stdout: str
    """Captured standard output (undecodable bytes replaced)."""
    stderr: str
    """Captured standard error (undecodable bytes replaced)."""
    error: str | None = None
    """Why the command did not run to completion (not found, timed out), if it did not."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def timed_out(self) -> bool:
        return self.error is not None and "timed out" in self.error

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0]) if self.argv else "command"

    @property
    def problem(self) -> str | None:
        """What went wrong, phrased for a person; None when the command succeeded."""
        if self.error is not None:
            return self.error
        if self.returncode is not None and self.returncode < 0:
            return f"{self.name} was killed by {_signal_name(-self.returncode)}"
        if self.returncode:
            detail = _last_line(self.stderr) or _last_line(self.stdout)
            suffix = f": {detail}" if detail else ""
            return f"{self.name} exited with status {self.returncode}{suffix}"
        return None


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Run `argv` with a timeout; the whole process group is killed when it hangs."""
    argv = tuple(str(a) for a in argv)
    name = os.path.basename(argv[0]) if argv else "command"
    try:
        # A new session gives the child its own process group, so a hung tool and anything it
        # spawned can be killed together without touching compat itself.
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except FileNotFoundError:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} not found")
    except PermissionError:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} is not executable")
    except OSError as exc:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} could not be started: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = _drain(proc)
        return RunResult(
            argv=argv, returncode=None, stdout=_text(out), stderr=_text(err),
            error=f"{name} timed out after {_seconds(timeout)}",
        )
    return RunResult(argv=argv, returncode=proc.returncode, stdout=_text(out), stderr=_text(err))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _drain(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    # A grandchild that escaped the group could keep the pipes open forever; do not wait on it.
    try:
        return proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        return b"", b""


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _seconds(timeout: float) -> str:
    return f"{timeout:g} s"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def marked_json(result: RunResult, mark: str) -> dict | None:
    """The JSON object a child printed after `mark` (its last such line); None if there is none.

    Children print their report behind a mark so that whatever else a site hook or a noisy
    import writes to stdout cannot be mistaken for it.
    """
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(mark):
            try:
                data = json.loads(line[len(mark):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None
