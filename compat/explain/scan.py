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

import hashlib
import platform
import re
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from typing import Any, BinaryIO, Protocol, overload

from compat.explain.colour import RECHECK, tolerant
from compat.explain.normalize import clean, coloured_every, dedup_key, strip_ansi
from compat.matrix.pattern_syntax import Alt, Char, Node, PatternSyntaxError, Repeat, Seq, parse_pattern

__all__ = ["clean", "dedup_key"]  # re-exported: callers read a line's message from here

MAX_LINE = 64 * 1024
"""Characters of one line tried against the full patterns (a 10 MB line is cut around the hit)."""

HUGE_LINE = 1024 * 1024
"""Bytes of one line the reader keeps; the rest of a longer line is dropped."""

MIN_LITERAL = 4
"""Shorter required literals would hit on ordinary text too often to be worth a prefilter."""

LITERAL_WINDOW = 10
"""Longest piece of a required literal kept for the prefilter (long literals gain nothing)."""

# Rough character frequency in training-log text, in tiers (in the spirit of ripgrep's
# rare-byte heuristic): lowercase text, digits and the punctuation of metric dicts and paths
# are everywhere; uppercase letters of logger levels are common; other capitals and some
# symbols are rare. The prefilter starts every literal at a character from a small, rare set,
# so the regex engine's first-character skip loop passes over almost all of the text.
_TIERS = (
    (100, " etaoinsrlhdcump0123456789.:_-,'/=()[]{}|"),
    (20, 'fgbwykvxjqz%<>"'),
    (5, "ITESARNOLCDUMPWFG+*#!"),
)
_WEIGHT = {ch: w for w, chars in _TIERS for ch in chars}
_RARE_WEIGHT = 1


def _weight(ch: str) -> int:
    return _WEIGHT.get(ch, _RARE_WEIGHT)


# --- required literals ----------------------------------------------------------------------

_Req = frozenset[str] | None  # any match contains one of these strings; None: nothing known


def required_literals(pattern: str) -> frozenset[str] | None:
    """Strings of which every match of `pattern` contains at least one, or None when the
    pattern guarantees no literal of MIN_LITERAL characters (it must then run on every line)."""
    try:
        parsed = parse_pattern(pattern)
    except PatternSyntaxError:
        return None  # no prefilter: slower, never wrong
    if parsed.flags & re.IGNORECASE:
        return None
    return _required(parsed.tree)


def _better(a: _Req, b: _Req) -> _Req:
    if a is None:
        return b
    if b is None:
        return a
    # Prefer the set whose weakest member is longest, then the smaller set.
    ka = (min(len(s) for s in a), -len(a))
    kb = (min(len(s) for s in b), -len(b))
    return a if ka >= kb else b


def _required(node: Node) -> _Req:
    if isinstance(node, Seq):
        return _seq(node.items)
    if isinstance(node, Alt):
        return _branch(node.options)
    if isinstance(node, Repeat):
        return _required(node.body) if node.lo >= 1 else None
    if isinstance(node, Char) and node.literal is not None:
        return _seq((node,))
    return None  # a class, an assertion, a back-reference: no literal text


def _seq(items: Sequence[Node]) -> _Req:
    best: _Req = None
    run: list[str] = []

    def flush() -> None:
        nonlocal best, run
        if len(run) >= MIN_LITERAL:
            best = _better(best, frozenset({"".join(run)}))
        run = []

    for item in items:
        if isinstance(item, Char) and item.literal is not None:
            run.append(item.literal)
            continue
        flush()
        best = _better(best, _required(item))
    flush()
    return best


def _branch(alternatives: Sequence[Node]) -> _Req:
    out: set[str] = set()
    for alt in alternatives:
        req = _required(alt)
        if req is None:
            return None
        out |= req
    return frozenset(out)


def choose_anchors(literals: Iterable[str]) -> dict[str, str]:
    """For each literal, the piece the prefilter looks for: up to LITERAL_WINDOW characters
    starting at a character from a small set of characters that covers every literal (greedy
    set cover). Any piece of a required literal is required too."""
    todo = set(literals)
    starts: set[str] = set()
    while todo - {lit for lit in todo if any(c in starts for c in lit[: max(1, len(lit) - MIN_LITERAL + 1)])}:
        uncovered = [lit for lit in todo if not any(c in starts for c in lit[: max(1, len(lit) - MIN_LITERAL + 1)])]
        counts: dict[str, int] = {}
        for lit in uncovered:
            for c in set(lit[: max(1, len(lit) - MIN_LITERAL + 1)]):
                counts[c] = counts.get(c, 0) + 1
        # Each start character costs one pass of a fast single-character scan, whatever its
        # frequency (a common one only adds false candidates): cover with as few as possible.
        best = max(sorted(counts), key=lambda c: (counts[c] / (1 + _weight(c) / 50), -_weight(c)))
        starts.add(best)
    out = {}
    for lit in todo:
        positions = [i for i, c in enumerate(lit[: max(1, len(lit) - MIN_LITERAL + 1)]) if c in starts]
        # Prefer the rarest start, then the longest piece.
        i = min(positions, key=lambda i: (_weight(lit[i]), -min(LITERAL_WINDOW, len(lit) - i), i))
        out[lit] = lit[i : i + LITERAL_WINDOW]
    return out


def trie_regex(words: Iterable[str]) -> str:
    """One regex matching any of `words`, factored as a trie so that the engine tries one
    branch per distinct next character instead of every word."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node and len(node) == 1:
            return ""
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        # A word ending here needs no more characters: every longer word contains it anyway.
        return "" if "" in node else body

    top = [re.escape(ch) + emit(child) for ch, child in sorted(trie.items())]
    return "|".join(top)


# --- the scanner --------------------------------------------------------------------------


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


COLOURED_EVERY = 512
"""Bytes per escape from which a block is read coloured, as it is. Sparser colour costs less to
remove: on 500 MB logs, one escape per 2 KB read in 1.34 s stripped and 1.46 s in place; one per
20 bytes, in 7.3 s stripped and 1.3 s in place."""

PARALLEL_BLOCK = 1024 * 1024
"""Bytes of a block from which Hyperscan reads its two halves in two threads."""

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


def _as_bytes(block: str | bytes) -> bytes:
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


def _confirm(compiled: Sequence[re.Pattern[str]], block: bytes, lines: dict[int, tuple[int, int, int]], keys: Iterable[tuple[int, int]],
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


def _numbered(block: bytes, starts: Iterable[int], first: int, stop: int) -> tuple[dict[int, int], int]:
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


def _unfinished(block: bytes) -> int:
    """1 when the block's last line has no newline (it still counts as a line)."""
    return 0 if not block or block.endswith(b"\n") else 1


def _line_at(block: bytes, pos: int) -> tuple[int, int, int, int]:
    """(start, cut start, cut end, end) of the line holding offset `pos`."""
    start = block.rfind(b"\n", 0, pos) + 1
    end = block.find(b"\n", pos)
    if end < 0:
        end = len(block)
    lo = max(start, pos - MAX_LINE // 2)
    hi = min(end, lo + MAX_LINE)
    return start, lo, hi, end


class _Engine:
    """What both engines answer: `scan` a block of whole lines; `scan_block` is its hits alone."""

    def prepare(self, block: str | bytes) -> bytes:
        """The block as `scan(..., plain=True)` reads it, which hits' offsets refer to: here,
        without its colours."""
        buf = _as_bytes(block)
        return strip_ansi(buf) if b"\x1b" in buf else buf

    def scan(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None, *, plain: bool = False,
             ) -> tuple[list[Hit], int]:
        raise NotImplementedError

    def scan_block(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None) -> list[Hit]:
        """Hits in one block of whole lines whose first line is number `line_base`; key k is
        reported on at most caps[k] lines (0: not at all)."""
        return self.scan(block, line_base, caps)[0]


class Scanner(_Engine):
    """The pure-Python engine: finds the lines of a log that match any of a set of regexes.

    `patterns` are regexes; a hit's key is the pattern's index. Feed text with `scan_block`,
    each block holding whole lines (str or UTF-8 bytes)."""

    engine = Engine.PYTHON

    def __init__(self, patterns: Sequence[str]) -> None:
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
        buf = _as_bytes(block)
        if not buf or not self.patterns:
            return [], count_lines(buf)
        budget = list(caps) if caps is not None else [LINE_CAP] * len(self.patterns)
        skip = {k for k, c in enumerate(budget) if c <= 0}
        if not plain:
            buf = strip_ansi(buf)
        lines: dict[int, tuple[int, int, int]] = {}
        keys: set[tuple[int, int]] = set()
        if self._always:
            always = [k for k in self._always if k not in skip]
            start = 0
            n = len(buf)
            while start < n and always:
                end = buf.find(b"\n", start)
                end = n if end < 0 else end
                lines[start] = (start, min(end, start + MAX_LINE), end)
                keys.update((start, k) for k in always)
                start = end + 1
        positions = sorted({m.start() for pre in self._pre for m in pre.finditer(buf)})
        done_until = -1
        for pos in positions:
            if pos <= done_until:
                continue  # another anchor on a line already tried
            start, lo, hi, end = _line_at(buf, pos)
            done_until = end
            line = buf[start:end]
            tried: set[int] = set()
            for anchor, ks in self._anchors:
                if anchor in line:
                    tried.update(k for k in ks if k not in skip)
            if not tried:
                continue
            if start not in lines:
                lines[start] = (lo, hi, end)
            keys.update((start, k) for k in tried)
        hits = []
        before, newlines = _numbered(buf, lines, 0, len(buf))
        number = {start: line_base + n for start, n in before.items()}
        for hit in _confirm(self._compiled, buf, lines, keys, number):
            if budget[hit.key] > 0:
                budget[hit.key] -= 1
                hits.append(hit)
        return hits, newlines + _unfinished(buf)


@dataclass(frozen=True, kw_only=True)
class _Segment:
    """What one thread found in its range of a block."""

    lines: dict[int, tuple[int, int, int]]
    """Start of each line with a candidate: (cut start, cut end, end)."""
    keys: set[tuple[int, int]]
    """Candidates: (line start, key)."""
    recheck: list[int]
    """Starts of the lines to match again uncoloured."""
    spent: frozenset[int]
    """Keys whose budget ran out."""
    before: dict[int, int]
    """Newlines of the range before each line start in `lines` and `recheck`."""
    newlines: int
    """Newlines in the range."""


class HyperscanScanner(_Engine):
    """The Hyperscan engine: the same hits as `Scanner`, one automaton pass per block.

    The automaton reports every end of every match, and a Python call per report is what costs:
    reports are kept one per line and key, and when a key uses up its budget (`caps`) the scan
    stops and goes on from that line with an automaton compiled without it (compiled once per
    set of spent keys and kept), so a log of a million identical INFO lines costs a thousand
    calls, not a million.

    A coloured block is read as it is, by a second automaton of the patterns rewritten to allow
    colour escapes (`colour`: all but an escape inside a word the pattern spells out), when
    every pattern can be rewritten; a line holding an OSC sequence is matched once more,
    uncoloured."""

    engine = Engine.HYPERSCAN

    def __init__(self, patterns: Sequence[str], once: Collection[int] = (), store: BlobStore | None = None) -> None:
        import hyperscan

        self._hs = hyperscan
        self.patterns = tuple(patterns)
        self._once = frozenset(once)
        self._store = store
        self._compiled = LazyPatterns(self.patterns)
        self._dbs: dict[tuple[frozenset[int], bool], Any] = {}
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._worker_scratch: dict[int, Any] = {}
        self._tolerant: tuple[str, ...] | None = None
        self._colour_known = False  # the rewritten patterns are made for the first coloured block
        if self.patterns:
            self._database(frozenset(), coloured=False)

    unfiltered: tuple[str, ...] = ()
    """Every pattern is in the automaton."""

    def _database(self, without: frozenset[int], *, coloured: bool) -> Any:
        db = self._dbs.get((without, coloured))
        if db is not None or len(without) >= len(self.patterns):
            return db
        with self._lock:  # both halves of a block may run out of the same key at once
            return self._build(without, coloured)

    def _build(self, without: frozenset[int], coloured: bool) -> Any:
        db = self._dbs.get((without, coloured))
        if db is not None:
            return db
        hs = self._hs
        n = len(self.patterns)
        keys = [k for k in range(n) if k not in without]
        source = self._tolerant if coloured and self._tolerant is not None else self.patterns
        expressions = [source[k].encode("utf-8") for k in keys]
        flags = [int(hs.HS_FLAG_MULTILINE | (0 if self.patterns[k].isascii() else hs.HS_FLAG_UTF8)
                     | (hs.HS_FLAG_SINGLEMATCH if k in self._once else 0)) for k in keys]
        if coloured:
            keys = keys + [n + i for i in range(len(RECHECK))]
            expressions += [p.encode() for p in RECHECK]
            flags += [int(hs.HS_FLAG_MULTILINE)] * len(RECHECK)
        # Compiling costs about a second for the whole catalog; a serialised database loads in
        # milliseconds. The name covers everything the database is built from.
        digest = hashlib.sha256(repr((hs.__version__, platform.machine(), expressions, keys, flags)).encode()).hexdigest()[:32]
        name = f"hyperscan-{digest}.db"
        db = self._load(name)
        if db is None:
            db = hs.Database(mode=hs.HS_MODE_BLOCK)
            try:
                db.compile(expressions=expressions, ids=keys, flags=flags)
            except hs.error:
                if not coloured:
                    raise
                self._tolerant = None  # too big for this build of Hyperscan: strip colours instead
                return None
            if self._store is not None:
                self._store.put(name, hs.dumpb(db))
        self._dbs[(without, coloured)] = db
        return db

    def _load(self, name: str) -> Any:
        if self._store is None:
            return None
        data = self._store.get(name)
        if not data:
            return None
        hs = self._hs
        try:
            db = hs.loadb(data, mode=hs.HS_MODE_BLOCK)
            db.scratch = hs.Scratch(db)
        except hs.error:
            return None  # another CPU or a damaged entry: compile instead
        return db

    def _reads_colour(self) -> bool:
        if not self._colour_known:
            rewritten = tuple(tolerant(p) for p in self.patterns)
            self._tolerant = None if None in rewritten else rewritten  # type: ignore[assignment]
            self._colour_known = True
        return self._tolerant is not None and self._database(frozenset(), coloured=True) is not None

    def prepare(self, block: str | bytes) -> bytes:
        """The block as `scan(..., plain=True)` reads it, which hits' offsets refer to: as it is
        when the colour automaton can read it and the block holds more than a few escapes,
        else without its colours (removing a few costs less than the colour automaton's slower
        pass, and is exact: see `colour`)."""
        buf = _as_bytes(block)
        return buf if self._reads_in_place(buf) else strip_ansi(buf)

    def _reads_in_place(self, buf: bytes) -> bool:
        return b"\x1b" in buf and coloured_every(buf, COLOURED_EVERY) and self._reads_colour()

    def scan(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None, *, plain: bool = False,
             ) -> tuple[list[Hit], int]:
        """`scan_block`'s hits and the number of lines in the block; `plain`: the block is as
        `prepare` gave it."""
        buf = _as_bytes(block) if plain else self.prepare(block)
        if not buf or not self.patterns:
            return [], count_lines(buf)
        coloured = self._reads_in_place(buf)
        budget = list(caps) if caps is not None else [LINE_CAP] * len(self.patterns)
        # Hyperscan lets go of the GIL while it scans: the second half of a large block is read
        # by another thread, and the two halves' reports are merged in the order of the lines.
        mid = buf.find(b"\n", len(buf) // 2) + 1 if len(buf) >= PARALLEL_BLOCK else 0
        if 0 < mid < len(buf):
            later = self._pool().submit(self._segment, buf, mid, len(buf), budget, coloured, worker=True)
            segments = [self._segment(buf, 0, mid, budget, coloured), later.result()]
        else:
            segments = [self._segment(buf, 0, len(buf), budget, coloured)]
        lines: dict[int, tuple[int, int, int]] = {}
        keys: set[tuple[int, int]] = set()
        number: dict[int, int] = {}
        base = line_base
        for segment in segments:
            lines.update(segment.lines)
            keys.update(segment.keys)
            number.update((start, base + n) for start, n in segment.before.items())
            base += segment.newlines
        recheck = [start for segment in segments for start in segment.recheck]
        if recheck:
            self._recheck(buf, recheck, frozenset().union(*(segment.spent for segment in segments)), lines, keys)
        hits = _confirm(self._compiled, buf, lines, keys, number, coloured=coloured)
        # Each half kept to the budget on its own, a rewritten pattern may admit a line the exact
        # one refuses, and rechecked lines add candidates: the budget holds for what is
        # confirmed, in the order of the lines.
        kept = []
        for hit in hits:
            if budget[hit.key] > 0:
                budget[hit.key] -= 1
                kept.append(hit)
        return kept, base - line_base + _unfinished(buf)

    def _pool(self) -> ThreadPoolExecutor:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compat-scan")
        return self._worker

    def _segment(self, buf: bytes, first: int, stop: int, caps: Sequence[int], coloured: bool, *, worker: bool = False) -> _Segment:
        """What the automaton reports in buf[first:stop], a range of whole lines, with those
        lines counted (in the thread that scanned: counting holds the GIL, which the other
        thread's scan does not need)."""
        budget = list(caps)
        spent = frozenset(k for k, c in enumerate(budget) if c <= 0)
        n_keys = len(self.patterns)
        line_end = [-1] * (n_keys + 1)
        found: list[tuple[int, int]] = []
        recheck: list[int] = []
        view = memoryview(buf)
        offset = first
        halted_at = -1
        newly_spent: set[int] = set()

        def at(key: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            nonlocal halted_at
            end = to + offset
            if key >= n_keys:  # a line to match again, uncoloured (`colour.RECHECK`)
                if end > line_end[n_keys]:
                    nl = buf.find(b"\n", end - 1, stop)
                    line_end[n_keys] = stop if nl < 0 else nl
                    recheck.append(end - 1)
                return False
            if end <= line_end[key] or budget[key] <= 0:
                return False
            pos = max(first, end - 1)
            nl = buf.find(b"\n", pos, stop)
            line_end[key] = stop if nl < 0 else nl
            found.append((pos, key))
            budget[key] -= 1
            if budget[key] <= 0:
                newly_spent.add(key)
                halted_at = pos
                return True  # stop: go on without this key
            return False

        while offset < stop:
            db = self._database(spent, coloured=coloured)
            if db is None:
                break
            halted_at = -1
            try:
                db.scan(view[offset:stop], match_event_handler=at, scratch=self._scratch(db) if worker else None)
            except self._hs.ScanTerminated:
                pass
            if halted_at < 0:
                break
            spent = spent | frozenset(newly_spent)
            newly_spent.clear()
            offset = buf.rfind(b"\n", first, halted_at) + 1 or first
        view.release()
        lines: dict[int, tuple[int, int, int]] = {}
        keys: set[tuple[int, int]] = set()
        for pos, key in found:
            start, lo, hi, end = _line_at(buf, pos)
            lines.setdefault(start, (lo, hi, end))
            keys.add((start, key))
        starts = [buf.rfind(b"\n", first, pos) + 1 or first for pos in recheck]
        before, newlines = _numbered(buf, {*lines, *starts}, first, stop)
        return _Segment(lines=lines, keys=keys, recheck=starts, spent=spent, before=before, newlines=newlines)

    def _scratch(self, db: Any) -> Any:
        """The worker thread's own scratch space for `db` (each thread scanning needs one)."""
        scratch = self._worker_scratch.get(id(db))
        if scratch is None:
            scratch = self._worker_scratch[id(db)] = self._hs.Scratch(db)
        return scratch

    def _recheck(self, buf: bytes, starts: list[int], spent: frozenset[int], lines: dict[int, tuple[int, int, int]],
                     keys: set[tuple[int, int]]) -> None:
        """Candidates on the lines the colour automaton may misread (`colour.RECHECK`): each is
        read uncoloured by the plain automaton."""
        db = self._database(spent, coloured=False)
        if db is None:
            return
        matched: set[int] = set()

        def at(key: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
            matched.add(key)

        for pos in starts:
            start, lo, hi, end = _line_at(buf, pos)
            matched.clear()
            db.scan(strip_ansi(buf[lo:hi]), match_event_handler=at)
            if matched:
                lines.setdefault(start, (lo, hi, end))
                keys.update((start, k) for k in matched)


def hyperscan_available() -> bool:
    """Whether the Hyperscan engine can be used here."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


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


def count_lines(block: str | bytes) -> int:
    """Lines in a block; a block without a final newline still ends a line."""
    if not block:
        return 0
    if isinstance(block, (bytes, bytearray)):
        return block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
    return block.count("\n") + (0 if block.endswith("\n") else 1)


def read_blocks(stream: BinaryIO, *, size: int = 8 * 1024 * 1024) -> Iterator[bytes]:
    """Blocks of whole lines from a binary stream. Of a line longer than HUGE_LINE only the
    first HUGE_LINE bytes are kept (ended with a newline so line numbers stay right).

    A block is read into a fresh bytearray and the line it ends inside is finished in place with
    readline: the text is copied once, by the read itself."""
    while True:
        buf = bytearray(size + HUGE_LINE + 1)
        view = memoryview(buf)
        n = stream.readinto(view[:size])  # type: ignore[attr-defined]  # every BinaryIO compat reads has readinto
        if not n:
            view.release()
            return
        if buf[n - 1] != 0x0A:
            head = buf.rfind(b"\n", 0, n) + 1
            partial = n - head
            if partial >= HUGE_LINE:
                n = head + HUGE_LINE
                buf[n] = 0x0A
                n += 1
                _drop_line(stream)
            else:
                rest = stream.readline(HUGE_LINE - partial)
                view[n : n + len(rest)] = rest
                n += len(rest)
                if rest and not rest.endswith(b"\n"):
                    buf[n] = 0x0A
                    n += 1
                    _drop_line(stream)
        view.release()
        del buf[n:]
        yield buf  # type: ignore[misc]  # a bytearray reads like bytes everywhere a block goes


def _drop_line(stream: BinaryIO) -> None:
    """Skips to the start of the next line (the rest of a huge line)."""
    while True:
        rest = stream.readline(HUGE_LINE)
        if not rest or rest.endswith(b"\n"):
            return
