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
import threading
from types import FrameType

_lock = threading.Lock()
_groups: set[int] = set()


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
    kill_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
