"""Where the test suite's CPU goes: a pytest plugin that records each test's CPU, and its summary (issue 25).

On a shared machine wall time is mostly waiting for a core, so each test's setup, call and teardown are measured
in CPU: `resource.getrusage` of the pytest process (RUSAGE_SELF) and of the children it has waited for
(RUSAGE_CHILDREN). A child reaped late (a daemon, a killed process group) is counted in the test that reaped it.
Collection is one more row. Run with one process, so that every test's children are its own:

    PYTHONPATH=. SUITE_CPU_OUT=/tmp/cpu.jsonl python -m pytest --no-cov -q -n 0 -p no:cacheprovider \\
        -p bench.suite_cpu -m 'not slow' tests/fault
    python bench/suite_cpu.py /tmp/cpu.jsonl [TOP]

Add `--cov=compat --cov-branch` instead of `--no-cov` to see what the README's command pays under coverage.
Unset PYTHONDONTWRITEBYTECODE first (docs/testing.md, "What the suite costs").
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest

_started: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _write(row: dict[str, Any]) -> None:
    with open(os.environ.get("SUITE_CPU_OUT", "suite-cpu.jsonl"), "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def _measured(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    wall, (own, children) = time.perf_counter(), _cpu()
    yield
    own_after, children_after = _cpu()
    _write({"id": item.nodeid, "phase": phase, "self": own_after - own, "child": children_after - children,
            "wall": time.perf_counter() - wall})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _measured(item, "teardown")


def pytest_sessionstart(session: pytest.Session) -> None:
    global _started
    _started = (time.perf_counter(), *_cpu())


def pytest_collection_finish(session: pytest.Session) -> None:
    own, children = _cpu()
    _write({"id": "<collection>", "phase": "collect", "self": own - _started[1], "child": children - _started[2],
            "wall": time.perf_counter() - _started[0]})


def _line(total: list[float], name: str) -> str:
    own, children, wall = total[:3]
    return f"{own + children:8.1f} s  own {own:7.1f}  children {children:7.1f}  wall {wall:7.1f}  {name}"


def summary(path: str, top: int = 25) -> str:
    """Totals, then folders, files and tests by CPU (own + children), biggest first."""
    tests: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    with open(path, encoding="utf-8") as rows:
        for raw in rows:
            row = json.loads(raw)
            total = tests[row["id"]]
            total[0] += row["self"]
            total[1] += row["child"]
            total[2] += row["wall"]
    groups: dict[str, dict[str, list[float]]] = {"folders": defaultdict(lambda: [0.0, 0.0, 0.0]),
                                                 "files": defaultdict(lambda: [0.0, 0.0, 0.0])}
    for name, total in tests.items():
        file = name.split("::")[0]
        for kind, key in (("folders", "/".join(file.split("/")[:2])), ("files", file)):
            for i in range(3):
                groups[kind][key][i] += total[i]
    everything = [sum(t[i] for t in tests.values()) for i in range(3)]
    out = [_line(everything, f"all ({len(tests) - ('<collection>' in tests)} tests)")]
    for kind, table in (*groups.items(), ("tests", tests)):
        out.append(f"--- {kind}")
        ranked = sorted(table.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        out += [_line(total, name) for name, total in ranked[:top]]
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25))
