"""The Hyperscan engine: every pattern compiled into one automaton that reads a block of text once.

Hyperscan (`hyperscan` wheels) is an optional dependency; `hyperscan_available` says whether it is
installed here, and `scan.make_scanner` falls back to the pure-Python engine without it.
"""

from __future__ import annotations

import hashlib
import json
import platform
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from compat.explain.blocks import count_lines
from compat.explain.engine import (
    LINE_CAP,
    BlobStore,
    Engine,
    EngineBase,
    Hit,
    LazyPatterns,
    as_bytes,
    confirm,
    line_at,
    numbered,
    unfinished,
)
from compat.explain.normalize import RECHECK, coloured_every, strip_ansi

COLOURED_EVERY = 512
"""Bytes per escape from which a block is read coloured, as it is. Sparser colour costs less to
remove: on 500 MB logs, one escape per 2 KB read in 1.34 s stripped and 1.46 s in place; one per
20 bytes, in 7.3 s stripped and 1.3 s in place."""

PARALLEL_BLOCK = 1024 * 1024
"""Bytes of a block from which Hyperscan reads its two halves in two threads."""

SWITCH_AFTER = 32 * 1024 * 1024
"""Bytes left in a segment from which a key that spent its budget is dropped by switching to an automaton without it
when that automaton is not compiled yet. Compiling one costs about a second and a half of CPU for the catalog; the spent
key's further reports cost a Python call each (about a microsecond: some ten milliseconds a MB for a pattern that
matches every line), so on less than this the automaton at hand reads on and the reports are ignored. A 3,000-line log
repeating one OOM line read in 1.84 s with a compile and reads in 0.3 s without."""

REMEMBERED = 32
"""Compiled automata a process keeps in memory when it has no store (about 0.5 MB each)."""


class _Remembered:
    """A `BlobStore` in this process's memory, for a scanner given no store (a library caller without compat's cache,
    a process explaining many logs), and behind a store that lacks an entry (a process that reads logs with several
    cache directories): each automaton is compiled once per process (a second or more for the catalog; loading a
    serialised one costs milliseconds). Only compiled automata go in: their names cover all they are built from."""

    _kept: ClassVar[OrderedDict[str, bytes]] = OrderedDict()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def get(self, name: str) -> bytes | None:
        with self._lock:
            data = self._kept.get(name)
            if data is not None:
                self._kept.move_to_end(name)
            return data

    def put(self, name: str, data: bytes) -> None:
        with self._lock:
            self._kept[name] = data
            self._kept.move_to_end(name)
            while len(self._kept) > REMEMBERED:
                self._kept.popitem(last=False)


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


class HyperscanScanner(EngineBase):
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
        self._automata: BlobStore = store if store is not None else _Remembered()
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
        expressions, keys, flags = self._source(without, coloured)
        name = self._name(expressions, keys, flags)
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
            blob = hs.dumpb(db)
            self._automata.put(name, blob)
            if self._store is not None:
                _Remembered().put(name, blob)
        self._dbs[(without, coloured)] = db
        return db

    def _source(self, without: frozenset[int], coloured: bool) -> tuple[list[bytes], list[int], list[int]]:
        """The expressions, ids and flags of the automaton without these keys."""
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
        return expressions, keys, flags

    def _name(self, expressions: list[bytes], keys: list[int], flags: list[int]) -> str:
        """The store's name of an automaton: it covers everything the automaton is built from. Compiling costs about a
        second for the whole catalog; a serialised automaton loads in milliseconds."""
        hs: Any = self._hs
        digest = hashlib.sha256(repr((hs.__version__, platform.machine(), expressions, keys, flags)).encode()).hexdigest()[:32]
        return f"hyperscan-{digest}.db"

    def _ready(self, without: frozenset[int], coloured: bool) -> bool:
        """Whether the automaton without these keys is at hand (in memory or in the store) without compiling it."""
        if (without, coloured) in self._dbs:
            return True
        expressions, keys, flags = self._source(without, coloured)
        db = self._load(self._name(expressions, keys, flags))
        if db is not None:
            self._dbs[(without, coloured)] = db
        return db is not None

    def _load(self, name: str) -> Any:
        data = self._automata.get(name)
        if not data and self._store is not None:
            # Compiled earlier in this process for another store (another cache directory): the name covers all an
            # automaton is built from, so it is the same automaton, and the store gets it as if compiled here.
            data = _Remembered().get(name)
            if data:
                self._store.put(name, data)
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
            rewritten = self._rewritten()
            self._tolerant = None if None in rewritten else rewritten  # type: ignore[assignment]
            self._colour_known = True
        return self._tolerant is not None and self._database(frozenset(), coloured=True) is not None

    def _rewritten(self) -> tuple[str | None, ...]:
        """Each pattern rewritten to read coloured text (`colour.tolerant`; None where it cannot be), kept in the
        store: rewriting the whole catalog costs a tenth of a second, on every coloured log. The entry's name covers
        the patterns and the rewriting's code; an entry that does not read back as one answer per pattern is made
        again, never trusted."""
        name = _rewriting_name(self.patterns) if self._store is not None else None
        if name is not None and self._store is not None:
            found = _rewritten_entry(self._store.get(name), len(self.patterns))
            if found is not None:
                return found
        # The rewriting (and the pattern parser under it) is imported only when no stored rewriting answers.
        from compat.explain import colour

        rewritten = tuple(colour.tolerant(p) for p in self.patterns)
        if name is not None and self._store is not None:
            self._store.put(name, json.dumps(rewritten).encode())
        return rewritten

    def prepare(self, block: str | bytes) -> bytes:
        """The block as `scan(..., plain=True)` reads it, which hits' offsets refer to: as it is
        when the colour automaton can read it and the block holds more than a few escapes,
        else without its colours (removing a few costs less than the colour automaton's slower
        pass, and is exact: see `colour`)."""
        buf = as_bytes(block)
        return buf if self._reads_in_place(buf) else strip_ansi(buf)

    def _reads_in_place(self, buf: bytes) -> bool:
        return b"\x1b" in buf and coloured_every(buf, COLOURED_EVERY) and self._reads_colour()

    def scan(self, block: str | bytes, line_base: int = 1, caps: Sequence[int] | None = None, *, plain: bool = False,
             ) -> tuple[list[Hit], int]:
        """`scan_block`'s hits and the number of lines in the block; `plain`: the block is as
        `prepare` gave it."""
        buf = as_bytes(block) if plain else self.prepare(block)
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
        hits = confirm(self._compiled, buf, lines, keys, number, coloured=coloured)
        # Each half kept to the budget on its own, a rewritten pattern may admit a line the exact
        # one refuses, and rechecked lines add candidates: the budget holds for what is
        # confirmed, in the order of the lines.
        kept = []
        for hit in hits:
            if budget[hit.key] > 0:
                budget[hit.key] -= 1
                kept.append(hit)
        return kept, base - line_base + unfinished(buf)

    def release(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown()  # idle: every block's second half was waited for

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
            if key >= n_keys:  # a line to match again, uncoloured (`normalize.RECHECK`)
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
                if stop - pos < SWITCH_AFTER and not self._ready(spent | newly_spent, coloured):
                    return False  # read on with this automaton: the key's reports are ignored from here
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
            start, lo, hi, end = line_at(buf, pos)
            lines.setdefault(start, (lo, hi, end))
            keys.add((start, key))
        starts = [buf.rfind(b"\n", first, pos) + 1 or first for pos in recheck]
        before, newlines = numbered(buf, {*lines, *starts}, first, stop)
        return _Segment(lines=lines, keys=keys, recheck=starts, spent=spent, before=before, newlines=newlines)

    def _scratch(self, db: Any) -> Any:
        """The worker thread's own scratch space for `db` (each thread scanning needs one)."""
        scratch = self._worker_scratch.get(id(db))
        if scratch is None:
            scratch = self._worker_scratch[id(db)] = self._hs.Scratch(db)
        return scratch

    def _recheck(self, buf: bytes, starts: list[int], spent: frozenset[int], lines: dict[int, tuple[int, int, int]],
                     keys: set[tuple[int, int]]) -> None:
        """Candidates on the lines the colour automaton may misread (`normalize.RECHECK`): each is
        read uncoloured by the plain automaton."""
        db = self._database(spent, coloured=False)
        if db is None:
            return
        matched: set[int] = set()

        def at(key: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
            matched.add(key)

        for pos in starts:
            start, lo, hi, end = line_at(buf, pos)
            matched.clear()
            db.scan(strip_ansi(buf[lo:hi]), match_event_handler=at)
            if matched:
                lines.setdefault(start, (lo, hi, end))
                keys.update((start, k) for k in matched)


def _rewriting_name(patterns: Sequence[str]) -> str | None:
    """The store's name for the rewritten `patterns`: a digest of them and of the code that rewrites them (None when
    that code cannot be read, as in an installation without sources: then nothing is kept)."""
    # The modules' files by path, not imported: a cached rewriting needs neither the rewriting nor the pattern parser.
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(json.dumps(list(patterns)).encode())
    try:
        for source in (here / "colour.py", here / "normalize.py", here.parent / "matrix" / "pattern_syntax.py"):
            digest.update(source.read_bytes())
    except OSError:
        return None
    return f"tolerant-{digest.hexdigest()[:32]}.json"


def _rewritten_entry(data: bytes | None, count: int) -> tuple[str | None, ...] | None:
    """A stored rewriting when it holds one string or null per pattern, else None."""
    if not data:
        return None
    try:
        found = json.loads(data)
    except ValueError:
        return None
    if not isinstance(found, list) or len(found) != count or not all(p is None or isinstance(p, str) for p in found):
        return None
    return tuple(found)


def hyperscan_available() -> bool:
    """Whether the Hyperscan engine can be used here."""
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True
