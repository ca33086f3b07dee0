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
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO

from compat.sources import children


class Outcome(Enum):
    """How a child ended, as a value: callers branch on this, never on the wording of `problem`."""

    OK = "ok"
    FAILED = "failed"  # ran to its end with a non-zero status
    KILLED = "killed"  # ended by a signal it did not ask for (a crash)
    TIMED_OUT = "timed-out"  # still running at the bound, and killed there: says nothing about the child
    STOPPED = "stopped"  # printed more than compat keeps, and killed there
    NOT_FOUND = "not-found"  # no such executable: the tool is absent, which is a fact, not a failure
    NOT_RUN = "not-run"  # not executable, could not be started


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
    timed_out_after: float | None = None
    """The bound in seconds when the child was killed for running past it; None otherwise."""
    overflowed: bool = False
    """True when the child was killed for printing more than compat keeps."""
    not_found: bool = False
    """True when there is no such executable (nothing was started)."""

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    @property
    def timed_out(self) -> bool:
        return self.timed_out_after is not None

    @property
    def outcome(self) -> Outcome:
        if self.timed_out_after is not None:
            return Outcome.TIMED_OUT
        if self.overflowed:
            return Outcome.STOPPED
        if self.not_found:
            return Outcome.NOT_FOUND
        if self.error is not None or self.returncode is None:
            return Outcome.NOT_RUN
        if self.returncode < 0:
            return Outcome.KILLED
        return Outcome.FAILED if self.returncode else Outcome.OK

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


MAX_OUTPUT = 16 * 1024 * 1024
"""Bytes kept of each stream of a child: an interpreter that prints endlessly is stopped here,
not allowed to fill compat's memory (the largest real report, a big environment's packages, is
well under 1 MiB)."""

MAX_MEMORY = 4 * 2**30
"""Bytes of data memory (RLIMIT_DATA) a child may allocate: a probe that runs away fails with its
own MemoryError instead of pushing the host into swap or the OOM killer (the real probes use a
few hundred MiB). Reserved address space is not counted, so CUDA's large reservations are fine."""

_JOIN = 2.0  # seconds to wait for the pipes once the child is gone (a grandchild may hold them)


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    max_output: int = MAX_OUTPUT,
    max_memory: int = MAX_MEMORY,
) -> RunResult:
    """Run `argv` with a timeout, at most `max_output` bytes kept of each stream and at most
    `max_memory` bytes of data memory; the whole process group is killed when it hangs or prints
    too much."""
    argv = tuple(str(a) for a in argv)
    name = os.path.basename(argv[0]) if argv else "command"
    try:
        # A new session gives the child its own process group, so a hung tool and anything it
        # spawned can be killed together without touching compat itself.
        proc = children.spawn(lambda: subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        ))  # registered: a SIGTERM to compat ends this child's group too
    except FileNotFoundError:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} not found", not_found=True)
    except PermissionError:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} is not executable")
    except OSError as exc:
        return RunResult(argv=argv, returncode=None, stdout="", stderr="", error=f"{name} could not be started: {exc.strerror or exc}")
    assert proc.stdout is not None and proc.stderr is not None
    try:
        return _supervise(proc, argv, name, timeout=timeout, max_output=max_output, max_memory=max_memory)
    finally:
        children.ended(proc.pid)


def _supervise(
    proc: subprocess.Popen, argv: tuple[str, ...], name: str, *, timeout: float, max_output: int, max_memory: int,
) -> RunResult:
    assert proc.stdout is not None and proc.stderr is not None
    _limit_memory(proc.pid, max_memory)
    readers = [_Reader(proc.stdout, max_output, proc), _Reader(proc.stderr, max_output, proc)]
    for reader in readers:
        reader.start()
    error = None
    timed_out_after = None
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        error = f"{name} timed out after {_seconds(timeout)}"
        timed_out_after = timeout
    drained_by = time.monotonic() + _JOIN
    for reader in readers:
        reader.join(max(0.0, drained_by - time.monotonic()))
        reader.close()
    out, err = (reader.text() for reader in readers)
    overflowed = timed_out_after is None and any(reader.overflowed for reader in readers)
    if overflowed:
        error = f"{name} printed more than {_bytes(max_output)} and was stopped"
    if error is not None:
        return RunResult(
            argv=argv, returncode=None, stdout=out, stderr=err, error=error,
            timed_out_after=timed_out_after, overflowed=overflowed,
        )
    return RunResult(argv=argv, returncode=proc.returncode, stdout=out, stderr=err)


class _Reader(threading.Thread):
    """Drains one pipe of a child, keeping at most `limit` bytes; past that the child's group is killed."""

    def __init__(self, pipe: IO[bytes], limit: int, proc: subprocess.Popen) -> None:
        # A daemon thread: one blocked on a pipe that an escaped grandchild keeps open must not
        # keep compat alive at exit.
        super().__init__(daemon=True)
        self._pipe = pipe
        self._limit = limit
        self._proc = proc
        self._chunks: list[bytes] = []
        self._size = 0
        self.overflowed = False

    def run(self) -> None:
        fd = self._pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            room = self._limit - self._size
            if len(chunk) > room:
                self._chunks.append(chunk[:room])
                self._size = self._limit
                self.overflowed = True
                _kill_group(self._proc)
                break
            self._chunks.append(chunk)
            self._size += len(chunk)

    def close(self) -> None:
        if not self.is_alive():  # never close a descriptor another thread is reading
            self._pipe.close()

    def text(self) -> str:
        return _text(b"".join(self._chunks))


def _limit_memory(pid: int, limit: int) -> None:
    """Set the child's RLIMIT_DATA from outside (prlimit), as a preexec_fn is unsafe in a process with
    threads; it takes effect right after the child started, which is before a probe allocates much."""
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))
    except (ImportError, AttributeError, OSError, ValueError):
        pass  # not Linux, or the child is already gone: the time and output bounds still hold


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def _bytes(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size} bytes"


def seconds(timeout: float) -> str:
    """A bound as people read it ("60 s", "1.5 s")."""
    return _seconds(timeout)


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
            except (ValueError, RecursionError):  # a lying child may nest without end
                return None
            return data if isinstance(data, dict) else None
    return None
