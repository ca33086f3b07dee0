"""Coloured logs read in place (`compat.explain.colour`) and large blocks read in two threads: the
same hits as removing the colours first, on every recorded log of the catalog."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import threading
from collections import OrderedDict

import pytest

from compat.explain import automaton
from compat.explain.colour import tolerant
from compat.explain.match import explain
from compat.explain.normalize import strip_ansi
from compat.explain.scan import Engine, HyperscanScanner, Scanner, make_scanner
from tests.support.paths import LOGS

hyperscan = pytest.importorskip("hyperscan")

COLOURS = (b"\x1b[0m", b"\x1b[1;31m", b"\x1b[32m", b"\x1b[2K", b"\x1b[A", b"\x1b[38;5;208m", b"\x1b[?25l")
_WORD = re.compile(rb"\w", re.ASCII)


def colour(line: bytes, rng: random.Random) -> bytes:
    """`line` with escapes at random places, never between two word characters (see colour.py)."""
    out = bytearray()
    for i in range(len(line) + 1):
        inside_word = 0 < i < len(line) and _WORD.match(line, i - 1) and _WORD.match(line, i)
        if not inside_word and line[i - 1 : i] != b"\n" and rng.random() < 0.3:
            out += b"".join(rng.choice(COLOURS) for _ in range(rng.randint(1, 2)))
        out += line[i : i + 1]
    return bytes(out)


@pytest.fixture(scope="module")
def patterns(catalog):
    return [p for s in catalog.signatures for p in (*s.patterns, *s.context)]


@pytest.fixture
def block_size(monkeypatch) -> int:
    """The size from which a block is read in two threads, lowered from 1 MiB for these tests: what they check is the
    split (order, budgets, line numbers, colours per half), which does not depend on the size, and the Python engine
    they compare against reads 64 KiB sixteen times faster than a MiB."""
    monkeypatch.setattr(automaton, "PARALLEL_BLOCK", 64 * 1024)
    return automaton.PARALLEL_BLOCK


def _hits(scanner, block, caps=None):
    hits, total = scanner.scan(block, 1, caps)
    return [(h.key, h.line_number, h.text) for h in hits], total


def test_every_recorded_log_coloured_gives_the_hits_of_its_plain_text(patterns):
    text = strip_ansi(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in sorted(LOGS.rglob("*.log"))))
    rng = random.Random(7)
    coloured = b"".join(colour(line, rng) for line in text.splitlines(keepends=True))
    assert coloured.count(b"\x1b") > 10_000 and strip_ansi(coloured) == text
    scanner = make_scanner(patterns, Engine.HYPERSCAN)
    expected = _hits(Scanner(patterns), text)
    assert len(expected[0]) > 200
    assert scanner.prepare(coloured) is coloured  # read in place, not stripped
    assert _hits(scanner, coloured) == expected
    assert _hits(Scanner(patterns), coloured) == expected


def test_a_link_that_splits_a_message_is_read_without_its_colours(patterns):
    line = b"x \x1b]8;;https://example.org\x1b\\CUDA out\x1b]8;;\x1b\\ of memory. Tried to allocate 2.00 GiB\n"
    scanner = make_scanner(patterns, Engine.HYPERSCAN)
    (hit,), _ = scanner.scan(line)
    assert hit.text == "x CUDA out of memory. Tried to allocate 2.00 GiB"


def test_an_escape_inside_a_spelled_out_word_is_the_one_place_the_engines_differ(patterns):
    # Documented in colour.py: no logger colours part of a word, and looking for it costs 60%.
    line = b"RuntimeError: CUDA error: no kernel \x1b[1mim\x1b[0mage is available for execution on the device\n"
    assert _hits(Scanner(patterns), line)[0]
    assert _hits(make_scanner(patterns, Engine.HYPERSCAN), line)[0] == []


def test_a_pattern_that_cannot_be_rewritten_makes_the_scanner_remove_colours_instead(monkeypatch):
    assert tolerant(r"(\w+) and \1") is None
    assert tolerant(r"foo(?=bar)") is None
    from compat.explain import colour  # the automaton imports the rewriting when a coloured block first comes

    monkeypatch.setattr(colour, "tolerant", lambda p: None if p == "b+c" else tolerant(p))
    scanner = HyperscanScanner([r"CUDA out of memory", r"b+c"])
    coloured = b"\x1b[31mCUDA out\x1b[0m of memory\n"
    assert scanner.prepare(coloured) == b"CUDA out of memory\n"
    assert [h.key for h in scanner.scan(coloured)[0]] == [0]


class _Store(dict):
    """A BlobStore in memory."""

    def put(self, name: str, data: bytes) -> None:
        self[name] = data


def test_the_rewriting_is_kept_in_the_store_read_back_and_made_again_when_broken():
    patterns = [r"CUDA out of memory", r"\bnccl\b error", r"NCCL WARN"]
    coloured = b"\x1b[31mCUDA out\x1b[0m of memory\n" * 40  # an escape every few bytes: read in place
    store = _Store()
    hits = HyperscanScanner(patterns[:2], store=store).scan(coloured)[0]
    (name,) = [n for n in store if n.startswith("tolerant-")]
    assert json.loads(store[name]) == [tolerant(p) for p in patterns[:2]]
    # The entry is what the next scanner reads: one saying "cannot be rewritten" makes it remove the colours.
    store[name] = json.dumps([None, None]).encode()
    assert HyperscanScanner(patterns[:2], store=store).prepare(coloured) == strip_ansi(coloured)
    for broken in (b"", b"not json", b"[1, 2]", json.dumps(["only one"]).encode()):
        store[name] = broken
        assert HyperscanScanner(patterns[:2], store=store).scan(coloured)[0] == hits
        assert json.loads(store[name]) == [tolerant(p) for p in patterns[:2]]
    # Other patterns, another entry.
    names = {n for n in store if n.startswith("tolerant-")}
    HyperscanScanner(patterns, store=store).scan(coloured)
    (other,) = {n for n in store if n.startswith("tolerant-")} - names
    assert json.loads(store[other]) == [tolerant(p) for p in patterns]


def test_the_rewriting_keeps_anchors_and_drops_word_boundaries():
    scanner = HyperscanScanner([r"^Traceback \(most recent", r"\bnccl\b error", r"sm_\d+ is not compatible$"])
    block = (b"\x1b[1mTraceback\x1b[0m (most recent call last):\n"
             b"\x1b[33mnccl\x1b[0m error\n"
             b"sm_\x1b[1m120\x1b[0m is not compatible\x1b[0m\n")
    assert [(h.key, h.line_number) for h in scanner.scan(block)[0]] == [(0, 1), (1, 2), (2, 3)]


def test_a_large_block_read_in_two_threads_keeps_order_budget_and_line_numbers(patterns, block_size):
    info = b"\x1b[32mINFO\x1b[0m step done\n"
    hang = (LOGS / "nccl-watchdog-timeout.log").read_bytes().splitlines()[0] + b"\n"
    oom = b"\x1b[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m\n"
    lines = [info] * (block_size // len(info) + 10)
    for at in (5, len(lines) // 2 - 1, len(lines) // 2 + 3, len(lines) - 2):
        lines[at] = hang
    for at in range(0, len(lines), 97):
        lines[at] = oom  # hits in both halves, more than a budget of 3 allows
    block = b"".join(lines)
    assert len(block) >= block_size
    caps = [3] * len(patterns)
    expected = _hits(Scanner(patterns), strip_ansi(block), caps)
    assert _hits(make_scanner(patterns, Engine.HYPERSCAN), block, caps) == expected
    assert expected[1] == len(lines) and len(expected[0]) >= 6


@pytest.mark.parametrize("every", [1, 40], ids=["coloured-in-place", "sparse-stripped-per-half"])
def test_a_large_log_with_errors_in_both_halves_explains_as_its_plain_text(catalog, every, block_size):
    filler = [b"\x1b[33mWARNING\x1b[0m step %d\n" % i if i % every == 0 else b"step %d done\n" % i for i in range(8_000)]
    roots = (LOGS / "roots" / "three-roots.log").read_bytes()
    lines = filler[:2_000] + [roots] + filler[2_000:6_500] + [roots] + filler[6_500:]
    coloured = b"".join(lines)
    assert len(coloured) >= block_size
    expected = explain([strip_ansi(coloured)], catalog, engine=Engine.PYTHON)  # one block, one thread
    assert expected.errors and any(e.root.frames for e in expected.errors)
    result = explain([coloured], catalog, engine=Engine.HYPERSCAN)
    assert dataclasses.replace(result, engine=Engine.PYTHON.value) == expected
    # the second half's thread is ended once the log is read (compat.cli.run exits at once when it is the only one)
    assert not [t for t in threading.enumerate() if t.name.startswith("compat-scan")]


def test_explain_on_a_coloured_log_names_what_it_names_uncoloured(catalog):
    plain = (LOGS / "reports" / "trl-2851-grpo-vllm-two-gpus.log").read_bytes()
    rng = random.Random(3)
    coloured = b"".join(colour(line, rng) for line in plain.splitlines(keepends=True))
    for engine in Engine:
        assert explain([coloured], catalog, engine=engine) == explain([plain], catalog, engine=engine)


@pytest.mark.parametrize("switch_after", [automaton.SWITCH_AFTER, 0], ids=["small-log-reads-on", "large-log-switches"])
def test_a_key_that_spends_its_budget_is_dropped_without_a_compile_on_a_small_log(monkeypatch, switch_after):
    # A 300-line log repeating an OOM: the OOM key spends its budget of 3 early. On a log this small the automaton at
    # hand reads on (no second automaton compiled); past SWITCH_AFTER it switches to one without the key. Either way
    # the hits are the Python engine's.
    monkeypatch.setattr(automaton, "SWITCH_AFTER", switch_after)
    # What this process compiled for other stores is at hand too (automaton._Remembered): none here, so the store
    # shows what this scan compiled.
    monkeypatch.setattr(automaton._Remembered, "_kept", OrderedDict())
    patterns = [r"CUDA out of memory", r"NCCL WARN", r"Traceback \(most recent"]
    block = b"".join(b"torch.OutOfMemoryError: CUDA out of memory. step %d\n" % i for i in range(300))
    block += b"NCCL WARN Cuda failure 'out of memory'\nTraceback (most recent call last):\n"
    store = _Store()
    caps = [3, 3, 3]
    assert _hits(HyperscanScanner(patterns, store=store), block, caps) == _hits(Scanner(patterns), block, caps)
    compiled = [n for n in store if n.startswith("hyperscan-")]
    assert len(compiled) == (1 if switch_after else 2)
