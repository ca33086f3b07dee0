"""The literal text every match of a pattern must contain, and the prefilter built from it.

The pure-Python engine (`scan.Scanner`) cannot afford every pattern on every line: it reduces each
pattern to "required literals" (strings of which any match holds one), picks a short, rare piece of
each (`choose_anchors`) and finds those with a few regexes factored as tries (`trie_regex`), so that
the full patterns run only on the lines that hold one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from compat.matrix.pattern_syntax import Alt, Char, Node, PatternSyntaxError, Repeat, Seq, parse_pattern

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
