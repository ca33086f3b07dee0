"""The child processes compat has running, so that a signal that ends compat ends them too.

Every probe child runs in a session of its own (compat/sources/probe/_run.py), so that a hung
tool and what it spawned can be killed together without touching compat. The other side of that:
SIGTERM or SIGHUP to compat (a job scheduler's cancel, a closed terminal) would leave them
running, an nvidia-smi stuck on a wedged driver among them. The command line installs
`end_children_on_signals`; the runner registers each child while it runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable
from types import FrameType

# Reentrant: the signal handler runs in the main thread between two bytecodes, possibly inside one of the blocks below.
_lock = threading.RLock()
_groups: set[int] = set()
_starting = 0
"""Children being started and not yet registered."""
_pending: int | None = None
"""A SIGTERM or SIGHUP that came while a child was being started: acted on once it is registered."""


def spawn(start: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """Start a child with `start` (a Popen in a session of its own) and register it. A signal that arrives between the
    fork and the registration waits for the registration, else the child, not yet known, would outlive compat."""
    global _starting
    with _lock:
        _starting += 1
    try:
        proc = start()
        started(proc.pid)
        return proc
    finally:
        with _lock:
            _starting -= 1
            signum = _pending if _starting == 0 else None
        if signum is not None:
            _on_signal(signum, None)


def started(pid: int) -> None:
    """A child (the leader of its own process group) is running."""
    with _lock:
        _groups.add(pid)


def ended(pid: int) -> None:
    """That child has been waited for."""
    with _lock:
        _groups.discard(pid)


def kill_all() -> None:
    """SIGKILL every running child's process group."""
    with _lock:
        groups = tuple(_groups)
    for pid in groups:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def end_children_on_signals() -> None:
    """On SIGTERM or SIGHUP: kill the children, then end as the signal would have ended compat.

    Only from the main thread (the only one that may set handlers); elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, _on_signal)
        except (ValueError, OSError):
            pass


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _pending
    with _lock:
        if _starting:
            _pending = signum
            return
    kill_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
