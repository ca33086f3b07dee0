"""explain reads a log once and removes each block's colours once (issue 22: it used to open the log
twice and normalise each line twice)."""

from __future__ import annotations

from collections import Counter

import pytest

import compat.explain.automaton
import compat.explain.engine
import compat.explain.scan
from compat import api
from compat.explain.engine import Engine
from compat.explain.match import explain
from compat.explain.normalize import strip_ansi
from compat.sources import log_file

LINE = (
    "\x1b[1;31m[rank3]:\x1b[0m 2025-02-13 10:01:02,123 \x1b[31mRuntimeError: CUDA error: CUDA driver version"
    " is insufficient for CUDA runtime version\x1b[0m\n"
)


def test_the_log_file_is_opened_once(catalog, tmp_path, monkeypatch):
    path = tmp_path / "train.log"
    path.write_text("starting\n" + LINE + "done\n")
    opened = []
    real_open = log_file.open_regular

    def counting_open(p):
        opened.append(p)
        return real_open(p)

    monkeypatch.setattr(log_file, "open_regular", counting_open)
    result = explain(api.read_log(str(path)), catalog)
    assert [m.signature.id for m in result.matches] == ["cuda-driver-insufficient-runtime"]
    assert opened == [path]


@pytest.mark.parametrize("engine", list(Engine))
def test_each_block_loses_its_colours_once(catalog, monkeypatch, engine):
    if engine is Engine.HYPERSCAN:
        pytest.importorskip("hyperscan")
    calls: Counter[bytes] = Counter()

    def counting_strip(buf):
        calls[bytes(buf)] += 1
        return strip_ansi(buf)

    for module in (compat.explain.automaton, compat.explain.engine, compat.explain.scan):
        monkeypatch.setattr(module, "strip_ansi", counting_strip)
    block = ("starting\n" + LINE + "done\n").encode()
    result = explain([block], catalog, engine=engine)
    assert [m.signature.id for m in result.matches] == ["cuda-driver-insufficient-runtime"]
    assert calls[block] <= 1  # the whole block: once, or not at all when the colour automaton reads it as it is
    assert calls[strip_ansi(block)] == 0  # never a second pass over a block already without colours
