"""Fast scanning of large logs for catalog patterns.

Running ~100 regexes on every line of a 1 GB log is far too slow in Python, and trying each
pattern in turn makes the cost grow with the catalog. Instead every pattern is reduced to
literal text that any match must contain ("required literals"); one regex built as a trie of
those literals scans whole blocks of text in C, and only lines holding a literal are decoded,
cleaned of prefixes and tried against the full patterns of the signatures that own it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from compat.matrix.pattern_syntax import Alt, Char, Node, PatternSyntaxError, Repeat, Seq, parse_pattern

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


# Prefixes that launchers and loggers put before a message; stripped for display and dedup.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_PREFIX = re.compile(
    r"^(?:\s*(?:"
    r"\[(?:rank|Rank|default)\s*\d+\]:?"  # [rank3]: / [default0]:
    r"|\((?:[A-Za-z_][\w-]*) pid=\d+\)"  # (EngineCore_DP0 pid=123) / (VllmWorker pid=9)
    r"|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?"  # 2025-02-13 10:01:02,123
    r"|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL|W|E|I)\s?\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?"  # vLLM: INFO 02-25 19:13:26
    r"|\[[A-Z]\d{4} \d{2}:\d{2}:\d{2}\.\d+ [\w.]+:\d+\]"  # torch C++: [E321 02:07:08.408 ProcessGroupNCCL.cpp:607]
    r"|\[[\w./-]+\.py:\d+(?::\w+)?\]"  # logger location: [core.py:586] / [real_accelerator.py:222:get_accelerator]
    r"|\d+:"  # `torchrun --tee` style rank number
    r")\s*)+"
)
_RANK_WORD = re.compile(r"(?i)\b(rank|local_rank|pid)(\s*[:=]?\s*)\d+")


def clean(line: str) -> str:
    """The message without ANSI colours, rank/process prefixes and timestamps."""
    line = _ANSI.sub("", line)
    return _PREFIX.sub("", line, count=1).strip()


def dedup_key(line: str) -> str:
    """Lines that differ only in a rank number or pid are one line printed by several ranks."""
    return _RANK_WORD.sub(r"\1\2N", clean(line))


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


@dataclass(frozen=True, kw_only=True)
class Hit:
    key: int
    """Index of the pattern (in the order given to Scanner) that matched."""
    line_number: int
    """1-based line number in the log."""
    text: str
    """The line as it appeared (decoded, cut to MAX_LINE around the hit)."""


class Scanner:
    """Finds the lines of a log that match any of a set of regexes, fast.

    `patterns` are (key, regex) pairs; several patterns may share a key. Feed text with
    `scan(blocks)`, where each block holds whole lines (str or UTF-8 bytes)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._compiled = tuple(re.compile(p) for p in self.patterns)
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
        self._anchors = tuple(sorted(((a, tuple(ix)) for a, ix in anchors.items()), key=lambda x: (-len(x[0]), x[0])))
        # One regex per start character: a pattern that begins with a literal character makes
        # the regex engine scan with a memchr-like loop (GB/s), while one alternation over all
        # anchors makes it test every position (about 140 MB/s). Passes grow with the number of
        # start characters, which the set cover keeps small, not with the number of patterns.
        by_start: dict[str, list[str]] = {}
        for anchor, _ in self._anchors:
            by_start.setdefault(anchor[0], []).append(anchor)
        sources = [trie_regex(group) for _, group in sorted(by_start.items())]
        self._pre_s = tuple(re.compile(src) for src in sources)
        self._pre_b = tuple(re.compile(src.encode("utf-8")) for src in sources)

    @property
    def unfiltered(self) -> tuple[str, ...]:
        """Patterns without a usable literal: they run on every line (slow on big logs)."""
        return tuple(self.patterns[i] for i in self._always)

    def scan_block(self, block: str | bytes, line_base: int = 1) -> list[Hit]:
        """Hits in one block of whole lines whose first line is number `line_base`."""
        is_bytes = isinstance(block, (bytes, bytearray))
        if self._always:
            return list(self._scan_all(block, line_base))
        # str or bytes: one body of find/count/slice serves both (decoding a whole block costs more).
        buf: Any = block
        pres = self._pre_b if is_bytes else self._pre_s
        if not pres or not buf:
            return []
        nl = b"\n" if is_bytes else "\n"
        # Candidate positions from every pass, then each candidate line once, in order.
        positions = sorted({m.start() for pre in pres for m in pre.finditer(buf)})
        hits: list[Hit] = []
        counted_to = 0
        line_no = line_base
        n = len(buf)
        done_until = -1
        for pos in positions:
            if pos <= done_until:
                continue  # another anchor on a line already tried
            start = buf.rfind(nl, 0, pos) + 1
            end = buf.find(nl, pos)
            if end < 0:
                end = n
            line_no += buf.count(nl, counted_to, start)
            counted_to = start
            lo = max(start, pos - MAX_LINE // 2)
            hi = min(end, lo + MAX_LINE)
            raw = buf[lo:hi]
            text = raw.decode("utf-8", "replace") if is_bytes else raw
            hits.extend(self._match_line(text, line_no))
            done_until = end
        return hits

    def _scan_all(self, block: str | bytes, line_base: int) -> Iterator[Hit]:
        text = block.decode("utf-8", "replace") if isinstance(block, (bytes, bytearray)) else block
        for offset, line in enumerate(text.split("\n")):
            yield from self._match_line(line[:MAX_LINE], line_base + offset, everything=True)

    def _match_line(self, text: str, line_no: int, *, everything: bool = False) -> Iterator[Hit]:
        tried: set[int] = set()
        candidates: list[int] = []
        if everything:
            candidates = list(range(len(self.patterns)))
        else:
            for anchor, keys in self._anchors:
                if anchor in text:
                    for k in keys:
                        if k not in tried:
                            tried.add(k)
                            candidates.append(k)
            candidates.extend(self._always)
        if not candidates:
            return
        plain = _ANSI.sub("", text) if "\x1b" in text else text
        for k in sorted(candidates):
            if self._compiled[k].search(plain):
                yield Hit(key=k, line_number=line_no, text=text)


def count_lines(block: str | bytes) -> int:
    """Lines in a block; a block without a final newline still ends a line."""
    if not block:
        return 0
    if isinstance(block, (bytes, bytearray)):
        return block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
    return block.count("\n") + (0 if block.endswith("\n") else 1)


def read_blocks(stream: BinaryIO, *, size: int = 8 * 1024 * 1024) -> Iterator[bytes]:
    """Blocks of whole lines from a binary stream. Of a line longer than HUGE_LINE only the
    first HUGE_LINE bytes are kept (ended with a newline so line numbers stay right)."""
    pending = b""
    skipping = False  # inside the dropped rest of a huge line
    while True:
        chunk = stream.read(size)
        if not chunk:
            break
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk = chunk[nl + 1 :]
            skipping = False
        data = pending + chunk if pending else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) > HUGE_LINE:
                yield data[:HUGE_LINE] + b"\n"
                pending = b""
                skipping = True
            else:
                pending = data
            continue
        if cut:
            yield data[:cut]
        pending = data[cut:]
        if len(pending) > HUGE_LINE:
            yield pending[:HUGE_LINE] + b"\n"
            pending = b""
            skipping = True
    if pending:
        yield pending
