"""The torch import report is cached per install; failures never are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from compat.sources.probe.interpreter import fetch_interpreter
from compat.sources.probe.torch import fetch_torch_import, parse_torch

pytestmark = pytest.mark.needs_torch


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
    stamp = fetch_interpreter(Path(sys.executable), timeout=30).torch_stamp
    fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp, cache_dir=tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/elsewhere")
    again = fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp, cache_dir=tmp_path)
    assert again.argv[-1] != "<cached>"


def test_failed_imports_are_not_cached(tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ImportError: libtorch_cuda.so: undefined symbol' >&2\nexit 1\n")
    broken.chmod(0o755)
    result = fetch_torch_import(broken, timeout=10, stamp="abc", cache_dir=tmp_path / "cache")
    assert not result.ok
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.json"))


def test_no_cache_dir_means_no_cache(tmp_path):
    stamp = fetch_interpreter(Path(sys.executable), timeout=30).torch_stamp
    first = fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp)
    second = fetch_torch_import(Path(sys.executable), timeout=60, stamp=stamp)
    assert first.argv[-1] != "<cached>" and second.argv[-1] != "<cached>"
