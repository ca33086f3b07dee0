"""What both scanning engines share: the hit record, the exact patterns that confirm a candidate line,
and the bookkeeping of lines in a block.

An engine (`scan.Scanner`, pure Python; `automaton.HyperscanScanner`) finds candidate (line, pattern)
pairs its own way; `confirm` then matches the exact Python pattern on each line, so both engines give
the same hits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, overload

from compat.explain.normalize import strip_ansi

MAX_LINE = 64 * 1024
"""Characters of one line tried against the full patterns (a 10 MB line is cut around the hit)."""


class Engine(str, Enum):
    """The automaton that finds candidate lines."""

    HYPERSCAN = "hyperscan"
    """One Hyperscan database for every pattern (the `hyperscan` package)."""
    PYTHON = "python"
    """Literal prefilters and `re`: always available, slower on logs full of candidate lines."""


class BlobStore(Protocol):
    """Somewhere to keep compiled automata between runs (compat's cache, from compat.sources)."""

    def get(self, name: str) -> bytes | None:
        """The bytes stored under `name`, None when there are none."""

    def put(self, name: str, data: bytes) -> None:
        """Keep `data` under `name`; failing to is not an error."""


LINE_CAP = 1000
"""Lines of one pattern reported by default (see `caps`): past that, its further hits are not
worth a Python call each."""


@dataclass(frozen=True, kw_only=True)
class Hit:
    key: int
    """Index of the pattern (in the order given to the scanner) that matched."""
    line_number: int
    """1-based line number in the log."""
    text: str
    """The line as it appeared (decoded, cut to MAX_LINE around the hit)."""
    end: int = 0
    """Offset in the block just past the line (its newline, or the block's end)."""


def as_bytes(block: str | bytes) -> bytes:
    return block.encode("utf-8", "surrogateescape") if isinstance(block, str) else block


class LazyPatterns(Sequence["re.Pattern[str]"]):
    """The exact patterns, each compiled the first time a candidate line needs it: the automaton confirms a few
    of 400 on a pasted log, and compiling them all cost a fifth of `compat explain`'s time on one."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._patterns = tuple(patterns)
        self._compiled: list[re.Pattern[str] | None] = [None] * len(self._patterns)

    def __len__(self) -> int:
        return len(self._patterns)

    @overload
    def __getitem__(self, k: int) -> re.Pattern[str]: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[re.Pattern[str]]: ...
    def __getitem__(self, k: int | slice) -> re.Pattern[str] | Sequence[re.Pattern[str]]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        found = self._compiled[k]
        if found is None:  # two threads may compile the same pattern: the same object either way
            found = self._compiled[k] = re.compile(self._patterns[k], re.ASCII)
        return found


def confirm(compiled: Sequence[re.Pattern[str]], block: bytes, lines: dict[int, tuple[int, int, int]], keys: Iterable[tuple[int, int]],
             number: Mapping[int, int], *, coloured: bool = False) -> list[Hit]:
    """Hits for the (line start, key) candidates whose exact pattern matches the line (its
    colours removed first when the block is `coloured`); `number` maps a line start to its line
    number."""
    hits: list[Hit] = []
    decoded: dict[int, str] = {}
    for start, k in sorted(keys):
        lo, hi, end = lines[start]
        text = decoded.get(start)
        if text is None:
            raw = block[lo:hi]
            text = decoded[start] = (strip_ansi(raw) if coloured else raw).decode("utf-8", "replace")
        if compiled[k].search(text):
            hits.append(Hit(key=k, line_number=number[start], text=text, end=end))
    return hits


def numbered(block: bytes, starts: Iterable[int], first: int, stop: int) -> tuple[dict[int, int], int]:
    """How many newlines of block[first:stop] come before each of the line `starts`, and in all:
    one pass over the range, whatever the number of lines asked for."""
    before: dict[int, int] = {}
    counted_to = first
    n = 0
    for start in sorted(starts):
        n += block.count(b"\n", counted_to, start)
        counted_to = start
        before[start] = n
    return before, n + block.count(b"\n", counted_to, stop)


def unfinished(block: bytes) -> int:
    """1 when the block's last line has no newline (it still counts as a line)."""
    return 0 if not block or block.endswith(b"\n") else 1


def line_at(block: bytes, pos: int) -> tuple[int, int, int, int]:
    """(start, cut start, cut end, end) of the line holding offset `pos`."""
    start = block.rfind(b"\n", 0, pos) + 1
    end = block.find(b"\n", pos)
    if end < 0:
        end = len(block)
    lo = max(start, pos - MAX_LINE // 2)
    hi = min(end, lo + MAX_LINE)
    return start, lo, hi, end


class EngineBase:
    """What both engines answer: `scan` a block of whole lines; `scan_block` is its hits alone."""

    def prepare(self, block: str | bytes) -> bytes:
        """The block as `scan(..., plain=True)` reads it, which hits' offsets refer to: here,
        without its colours."""
        buf = as_bytes(block)
        return strip_ansi(buf) if b"\x1b" in buf else buf

    def scan(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None, *, plain: bool = False,
             ) -> tuple[list[Hit], int]:
        raise NotImplementedError

    def scan_block(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None) -> list[Hit]:
        """Hits in one block of whole lines whose first line is number `line_base`; key k is
        reported on at most caps[k] lines (0: not at all)."""
        return self.scan(block, line_base, caps)[0]

    def release(self) -> None:
        """Ends what the engine keeps running between blocks (a scanning thread) once a log is read; the next
        block starts it again. A process whose only thread is left can exit at once (compat.cli.run)."""
