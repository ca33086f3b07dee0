"""The torch import report is cached per install; failures never are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from compat.sources.probe.interpreter import fetch_interpreter
from compat.sources.probe.torch import MARK, fetch_torch_import, parse_torch


def _torch_python(tmp_path: Path) -> tuple[Path, Path]:
    """A python whose torch import succeeds at once, and the file it appends a line to per run: what is cached and
    when is decided by compat, not by the child, so the tests of the key need no real torch import (2-3 s of CPU
    each, twice per test)."""
    runs = tmp_path / "runs"
    report = MARK + json.dumps({"installed": True, "version": "2.13.0+cpu"})
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho run >> '{runs}'\necho '{report}'\n")
    python.chmod(0o755)
    return python, runs


@pytest.mark.needs_torch
def test_second_probe_of_the_same_install_reads_the_cache(monkeypatch, tmp_path):
    stamp = fetch_interpreter(Path(sys.executable), timeout=30).torch_stamp
    assert stamp is not None
    first = fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp, cache_dir=tmp_path)
    second = fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp, cache_dir=tmp_path)
    assert first.argv[-1] != "<cached>" and second.argv[-1] == "<cached>"
    a, b = parse_torch(first, None, None), parse_torch(second, None, None)
    assert a == b and a.version.startswith("2.13.0")
    assert len(list(tmp_path.glob("torch/*.json"))) == 1


def test_another_stamp_or_library_path_misses(monkeypatch, tmp_path):
    python, runs = _torch_python(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    first = fetch_torch_import(python, timeout=60, stamp="abc", cache_dir=cache)
    assert first.ok and fetch_torch_import(python, timeout=60, stamp="abc", cache_dir=cache).argv[-1] == "<cached>"
    assert fetch_torch_import(python, timeout=60, stamp="abd", cache_dir=cache).argv[-1] != "<cached>"
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/elsewhere")
    again = fetch_torch_import(python, timeout=60, stamp="abc", cache_dir=cache)
    assert again.argv[-1] != "<cached>"
    assert runs.read_text().count("run") == 3


def test_failed_imports_are_not_cached(tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ImportError: libtorch_cuda.so: undefined symbol' >&2\nexit 1\n")
    broken.chmod(0o755)
    result = fetch_torch_import(broken, timeout=10, stamp="abc", cache_dir=tmp_path / "cache")
    assert not result.ok
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.json"))


def test_no_cache_dir_means_no_cache(tmp_path):
    python, runs = _torch_python(tmp_path)
    first = fetch_torch_import(python, timeout=60, stamp="abc")
    second = fetch_torch_import(python, timeout=60, stamp="abc")
    assert first.ok and first.argv[-1] != "<cached>" and second.argv[-1] != "<cached>"
    assert runs.read_text().count("run") == 2
