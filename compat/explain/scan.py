"""Fast scanning of large logs for many patterns at once.

Two engines find the candidate lines, and the exact Python pattern confirms each one, so both
give the same hits (but for an escape inside a word of a coloured log, see `colour`):

- Hyperscan (`hyperscan` wheels, an optional dependency) compiles every pattern into one
  automaton that reads a block of text once, whatever the number of patterns;
- without it, the pure-Python engine reduces every pattern to literal text that any match must
  contain ("required literals"), finds those with a few regexes built as tries (C speed), and
  tries the full patterns only on the lines that hold one.

Patterns are confirmed with `re.ASCII`: digits, word characters and spaces mean what the byte
automaton means by them, and always on the line with its colours removed.
Blocks are bytes of whole lines as `prepare` gives them: without colours (`normalize.strip_ansi`),
or, for Hyperscan, coloured as they are where it can read the colours in place (`colour`).
Each pattern has a budget of lines (`caps`, LINE_CAP by default) after which it is no longer
reported: a log of millions of identical INFO lines costs one pass of the automaton, not a
Python call per line.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from compat.explain.automaton import COLOURED_EVERY, PARALLEL_BLOCK, HyperscanScanner, hyperscan_available
from compat.explain.blocks import HUGE_LINE, count_lines, read_blocks
from compat.explain.engine import (
    LINE_CAP,
    MAX_LINE,
    BlobStore,
    Engine,
    EngineBase,
    Hit,
    as_bytes,
    confirm,
    line_at,
    numbered,
    unfinished,
)
from compat.explain.normalize import clean, dedup_key, strip_ansi

# Re-exported: callers read a line's message, the engines and the block reader from here.
# (MIN_LITERAL, required_literals and trie_regex too, through __getattr__ below.)
__all__ = [
    "COLOURED_EVERY", "HUGE_LINE", "LINE_CAP", "MAX_LINE", "PARALLEL_BLOCK", "BlobStore", "Engine", "Hit",
    "HyperscanScanner", "Scanner", "clean", "count_lines", "dedup_key", "hyperscan_available", "make_scanner",
    "read_blocks",
]


_LITERALS = frozenset({"MIN_LITERAL", "required_literals", "trie_regex"})


def __getattr__(name: str) -> Any:
    # The literal prefilter (and the pattern parser under it) is imported when asked for: the automaton engine
    # never needs it, and a pasted log's start-up should not pay for it.
    if name in _LITERALS:
        from compat.explain import literals

        return getattr(literals, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Scanner(EngineBase):
    """The pure-Python engine: finds the lines of a log that match any of a set of regexes.

    `patterns` are regexes; a hit's key is the pattern's index. Feed text with `scan_block`,
    each block holding whole lines (str or UTF-8 bytes)."""

    engine = Engine.PYTHON

    def __init__(self, patterns: Sequence[str]) -> None:
        from compat.explain.literals import choose_anchors, required_literals, trie_regex

        self.patterns = tuple(patterns)
        self._compiled = tuple(re.compile(p, re.ASCII) for p in self.patterns)
        anchors: dict[str, list[int]] = {}
        self._always: list[int] = []
        required: dict[int, frozenset[str]] = {}
        for i, pattern in enumerate(self.patterns):
            req = required_literals(pattern)
            if req is None:
                self._always.append(i)
            else:
                required[i] = req
        pieces = choose_anchors({lit for req in required.values() for lit in req})
        for i, req in required.items():
            for literal in sorted(req):
                anchors.setdefault(pieces[literal], []).append(i)
        # Longest anchors first so a line holding several is tested once per pattern.
        self._anchors = tuple(sorted(((a.encode("utf-8"), tuple(ix)) for a, ix in anchors.items()), key=lambda x: (-len(x[0]), x[0])))
        # One regex per start character: a pattern that begins with a literal character makes
        # the regex engine scan with a memchr-like loop (GB/s), while one alternation over all
        # anchors makes it test every position (about 140 MB/s). Passes grow with the number of
        # start characters, which the set cover keeps small, not with the number of patterns.
        by_start: dict[str, list[str]] = {}
        for anchor, _ in sorted(((a, ix) for a, ix in anchors.items()), key=lambda x: (-len(x[0]), x[0])):
            by_start.setdefault(anchor[0], []).append(anchor)
        self._pre = tuple(re.compile(trie_regex(group).encode("utf-8")) for _, group in sorted(by_start.items()))

    @property
    def unfiltered(self) -> tuple[str, ...]:
        """Patterns without a usable literal: they run on every line (slow on big logs)."""
        return tuple(self.patterns[i] for i in self._always)

    def scan(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None, *, plain: bool = False,
             ) -> tuple[list[Hit], int]:
        """`scan_block`'s hits and the number of lines in the block; `plain`: the caller has
        already removed the colours."""
        buf = as_bytes(block)
        if not buf or not self.patterns:
            return [], count_lines(buf)
        budget = list(caps) if caps is not None else [LINE_CAP] * len(self.patterns)
        skip = {k for k, c in enumerate(budget) if c <= 0}
        if not plain:
            buf = strip_ansi(buf)
        always = [k for k in self._always if k not in skip]
        lines: dict[int, tuple[int, int, int]] = {}
        tried_at: dict[int, set[int]] = {}
        positions = sorted({m.start() for pre in self._pre for m in pre.finditer(buf)})
        done_until = -1
        for pos in positions:
            if pos <= done_until:
                continue  # another anchor on a line already tried
            start, lo, hi, end = line_at(buf, pos)
            done_until = end
            line = buf[start:end]
            tried: set[int] = set()
            for anchor, ks in self._anchors:
                if anchor in line:
                    tried.update(k for k in ks if k not in skip)
            if not tried:
                continue
            lines[start] = (lo, hi, end)
            tried_at[start] = tried
        if always:
            found = self._every_line(buf, always, tried_at, line_base)
            newlines = buf.count(b"\n")
        else:
            before, newlines = numbered(buf, lines, 0, len(buf))
            number = {start: line_base + n for start, n in before.items()}
            found = confirm(self._compiled, buf, lines, ((start, k) for start, ks in tried_at.items() for k in ks), number)
        hits = []
        for hit in found:
            if budget[hit.key] > 0:
                budget[hit.key] -= 1
                hits.append(hit)
        return hits, newlines + unfinished(buf)

    def _every_line(self, buf: bytes, always: list[int], tried_at: dict[int, set[int]], line_base: int) -> list[Hit]:
        """The hits of the patterns without a literal (`always`, which run on every line) and of those the anchors
        chose for a line (`tried_at`), in the order `confirm` gives: by line, then key. Each line is decoded once and
        walked in order: a set of (line, key) candidates for every line and pattern cost more to build and sort than
        the searches (6 of 10 s for the catalog on 3,000 lines)."""
        search = [rx.search for rx in self._compiled]
        hits: list[Hit] = []
        n = len(buf)
        start = 0
        number = line_base
        while start < n:
            end = buf.find(b"\n", start)
            end = n if end < 0 else end
            extra = tried_at.get(start)
            keys = always if not extra else sorted(extra.union(always))
            text = buf[start:min(end, start + MAX_LINE)].decode("utf-8", "replace")
            hits.extend([Hit(key=k, line_number=number, text=text, end=end) for k in keys if search[k](text)])
            number += 1
            start = end + 1
        return hits


def make_scanner(
    patterns: Sequence[str], engine: Engine | None = None, once: Collection[int] = (), store: BlobStore | None = None,
) -> Scanner | HyperscanScanner:
    """A scanner for `patterns` on `engine`, by default the fastest one installed. Keys in `once`
    are only asked whether they occur: the automaton may report them on one line per block.
    `store` keeps compiled automata between runs."""
    if engine is None:
        engine = Engine.HYPERSCAN if hyperscan_available() else Engine.PYTHON
    if engine is Engine.HYPERSCAN:
        return HyperscanScanner(patterns, once, store)
    return Scanner(patterns)
