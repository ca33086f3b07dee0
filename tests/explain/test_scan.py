"""The log scanner's edges: patterns without a literal, bytes and str alike, huge lines, odd blocks."""

from __future__ import annotations

import io

import pytest

from compat.explain import blocks as block_reader
from compat.explain import scan
from compat.explain.scan import Scanner, count_lines, read_blocks, required_literals

LOG = "step 1 ok\n[rank3]: NCCL error: unhandled system error\nstep 2 ok\n12 errors found\n"


def test_required_literals():
    assert required_literals("NCCL error: unhandled") == frozenset({"NCCL error: unhandled"})
    assert required_literals(r"\d+ errors?") == frozenset({" error"})
    assert required_literals(r"\d+") is None  # nothing of MIN_LITERAL characters
    assert required_literals("(?i)nccl error") is None  # case-insensitive: no literal to search for
    assert required_literals("(unclosed") is None


@pytest.mark.parametrize("as_bytes", [False, True])
def test_literal_and_literal_free_patterns_find_the_same_lines(as_bytes):
    block = LOG.encode() if as_bytes else LOG
    anchored = Scanner([r"NCCL error: \w+", r"\d+ errors? found"])
    assert anchored.unfiltered == ()
    assert [(h.key, h.line_number) for h in anchored.scan_block(block, 10)] == [(0, 11), (1, 13)]
    everywhere = Scanner([r"NCCL error: \w+", r"^\d+ \w+ \w+$"])
    assert everywhere.unfiltered == (r"^\d+ \w+ \w+$",)
    hits = everywhere.scan_block(block, 10)
    assert [(h.key, h.line_number, h.text) for h in hits] == [
        (0, 11, "[rank3]: NCCL error: unhandled system error"),
        (1, 13, "12 errors found"),
    ]


def test_an_empty_block_or_no_anchor_has_no_hits():
    s = Scanner([r"NCCL error"])
    assert s.scan_block("") == []
    assert s.scan_block(b"nothing here\n") == []
    assert Scanner([]).scan_block("anything\n") == []


def test_a_hit_on_a_long_line_keeps_the_text_around_it():
    line = "x" * (scan.MAX_LINE * 2) + " NCCL error: boom " + "y" * 10
    (hit,) = Scanner([r"NCCL error: \w+"]).scan_block(line + "\nnext\n")
    assert "NCCL error: boom" in hit.text
    assert len(hit.text) <= scan.MAX_LINE
    assert hit.line_number == 1


def test_count_lines():
    assert count_lines("") == 0
    assert count_lines("a\nb\n") == count_lines(b"a\nb\n") == 2
    assert count_lines("a\nb") == count_lines(b"a\nb") == 2


def test_read_blocks_keeps_whole_lines(monkeypatch):
    data = b"one\ntwo\nthree\nfour"
    blocks = list(read_blocks(io.BytesIO(data), size=5))
    assert b"".join(blocks) == data
    assert all(b.endswith(b"\n") for b in blocks[:-1])


def test_a_plain_file_is_read_in_the_same_blocks_with_buffers_no_larger_than_what_is_left(tmp_path, monkeypatch):
    monkeypatch.setattr(block_reader, "_MIN_ROOM", 4)
    data = b"".join(b"line %d of the log\n" % i for i in range(50)) + b"no newline at the end"
    path = tmp_path / "x.log"
    path.write_bytes(data)
    with path.open("rb") as plain:
        from_file = list(read_blocks(plain, size=64))
    assert from_file == list(read_blocks(io.BytesIO(data), size=64))  # a stream of unknown size: full buffers
    assert b"".join(from_file) == data and len(from_file) > 10
    with path.open("rb") as plain:
        assert block_reader._room(plain, 8 * 1024 * 1024) == len(data)  # a small log: not 8 MB
        plain.seek(len(data) - 3)
        assert block_reader._room(plain, 8 * 1024 * 1024) == 4  # at least a little, for a log still being written
        plain.seek(0)
        assert block_reader._room(plain, 64) == 64
    assert block_reader._room(io.BytesIO(data), 64) == 64
    # A log that grows between reads still gives its new lines.
    with path.open("rb") as plain:
        blocks = read_blocks(plain, size=8 * 1024 * 1024)
        assert next(blocks) == data
        with path.open("ab") as writer:
            writer.write(b"\nmore\n")
        assert b"".join(blocks) == b"\nmore\n"


def test_read_blocks_cuts_a_huge_line_and_keeps_counting(monkeypatch):
    monkeypatch.setattr(block_reader, "HUGE_LINE", 8)
    data = b"short\n" + b"H" * 30 + b"\nafter\n"
    blocks = list(read_blocks(io.BytesIO(data), size=4))
    text = b"".join(blocks)
    assert text == b"short\n" + b"H" * 8 + b"\nafter\n"
    assert count_lines(text) == 3


def test_read_blocks_cuts_a_huge_line_that_ends_a_block(monkeypatch):
    monkeypatch.setattr(block_reader, "HUGE_LINE", 8)
    data = b"a\n" + b"H" * 20 + b"\nz\n"
    assert b"".join(read_blocks(io.BytesIO(data), size=16)) == b"a\n" + b"H" * 8 + b"\nz\n"
