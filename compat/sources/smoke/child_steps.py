"""The step protocol of `compat smoke`'s child (child.py): each step prints one `@@compat-smoke {json}` line.

A sibling of child.py, imported by it (from the script's own folder when run by path): like child.py it
uses the standard library only, so the judged environment does not need compat installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator

MARK = "@@compat-smoke "
FAILED: list[str] = []


class Skip(Exception):
    """The step does not apply here; the message says why."""


def _rank() -> int:
    for name in ("RANK", "LOCAL_PROCESS_INDEX"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def emit(name: str, status: str, seconds: float, detail: str | None = None) -> None:
    if _rank() != 0:
        return
    doc = {"name": name, "status": status, "seconds": round(seconds, 3), "detail": detail}
    sys.stdout.write(MARK + json.dumps(doc, sort_keys=True) + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def step(name: str) -> Iterator[list[str]]:
    """Run one step: pass, skip (Skip raised) or fail (anything else: its traceback goes to stderr).
    The list yielded takes a detail for a passing step (a version)."""
    started = time.monotonic()
    detail: list[str] = []
    try:
        yield detail
    except Skip as why:
        emit(name, "skipped", time.monotonic() - started, str(why))
    except (Exception, SystemExit) as exc:
        # smoke's child boundary: a step runs the judged stack, whose failures have no closed list, and a
        # library's sys.exit() is that step's failure too. KeyboardInterrupt is not caught: it ends the run.
        traceback.print_exc()
        sys.stderr.flush()
        # The first line names the error; libraries append advice lines ("Try: pip install ...") after it.
        lines = [ln for ln in f"{type(exc).__name__}: {exc}".splitlines() if ln.strip()]
        emit(name, "fail", time.monotonic() - started, lines[0][:500] if lines else type(exc).__name__)
        FAILED.append(name)
    else:
        emit(name, "pass", time.monotonic() - started, detail[0] if detail else None)


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
