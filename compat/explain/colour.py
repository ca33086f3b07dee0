"""Matching a coloured log as it is, without removing the colours first.

A log coloured on every line holds an escape every 15 bytes or so; removing them costs one
`re.sub` step each, three times what the automaton needs for the whole catalog. Instead the
automaton reads the coloured text itself, each pattern rewritten (`tolerant`) to allow a run of
colour escapes (CSI sequences: colours, cursor moves, line erasure) beside every character that
is not a letter, digit or underscore the pattern spells out: beside a space, a colon, a quote,
a character class, the start or end of a line. The words a pattern spells out stay whole, so the
automaton keeps the literal text it looks for first.

What this does not see is an escape inside such a word ("Runtime<ESC>[31mError"). No logger of
the stack colours part of a word (they colour levels, names, numbers, paths and whole messages,
token by token), and finding such escapes means examining every escape, which made coloured
logs 60% slower to read (bench/explain_bench.py: 2.0 s against 1.25 s on 526 MB). The
pure-Python engine, which removes every escape first, does see it.

A line holding an OSC sequence (a title, a link), which colour removal also takes out, is
matched again with its colours removed (`RECHECK`); any other escape is text in both readings.
Every candidate line is confirmed with the exact pattern on its uncoloured text.
"""

from __future__ import annotations

import re

from compat.explain.normalize import CSI, RECHECK
from compat.matrix.pattern_syntax import Alt, Char, Node, PatternSyntaxError, Repeat, Seq, Zero, parse_pattern

__all__ = ["RECHECK", "tolerant"]

_ESCAPES = f"(?:{CSI})*"


class _Untranslatable(Exception):
    pass


def tolerant(pattern: str) -> str | None:
    """`pattern` rewritten to match the same text with colour escapes between its elements,
    except inside a word it spells out; None where it cannot be rewritten (a back-reference, a
    lookaround), and the caller removes colours instead."""
    try:
        parsed = parse_pattern(pattern)
    except PatternSyntaxError:
        return None
    if parsed.unsupported:
        return None
    try:
        return _rewrite(parsed.tree)[0]
    except _Untranslatable:
        return None


_WORD = re.compile(r"\w", re.ASCII)
_IGNORECASE = int(re.IGNORECASE)
_DOTALL = int(re.DOTALL)


def _takes_escapes(char: Char) -> bool:
    """Whether escapes may stand beside this element: all but a letter, digit or underscore the
    pattern spells out (a class costs the automaton nothing to allow them beside)."""
    return char.literal is None or not _WORD.fullmatch(char.literal)


def _scoped(char: Char) -> str:
    letters = ("i" if char.flags & _IGNORECASE else "") + ("s" if char.flags & _DOTALL else "")
    return f"(?{letters}:{char.source})" if letters else char.source


def _rewrite(node: Node) -> tuple[str, bool, bool, bool]:
    """(regex, escapes may stand before its first element, after its last one, may match nothing)."""
    if isinstance(node, Char):
        edge = _takes_escapes(node)
        return _scoped(node), edge, edge, False
    if isinstance(node, Zero):
        if node.source in ("^", "$"):
            return node.source, True, True, True
        if node.source in (r"\b", r"\B"):
            # An escape beside a word moves where the raw text's word boundaries are: the
            # assertion is left out here and the exact pattern decides on the uncoloured line.
            return "", True, True, True
        raise _Untranslatable
    if isinstance(node, Seq):
        parts: list[str] = []
        first = last = False
        nullable = True
        previous_last: bool | None = None
        for item in node.items:
            regex, begins, ends, empty = _rewrite(item)
            if previous_last is not None and (previous_last or begins):
                parts.append(_ESCAPES)
            parts.append(regex)
            if nullable:
                first = first or begins
            last = ends or (last and empty)
            nullable = nullable and empty
            previous_last = ends
        return "(?:" + "".join(parts) + ")", first, last, nullable
    if isinstance(node, Alt):
        options = [_rewrite(o) for o in node.options]
        return ("(?:" + "|".join(o[0] for o in options) + ")", any(o[1] for o in options), any(o[2] for o in options),
                any(o[3] for o in options))
    if isinstance(node, Repeat):
        regex, begins, ends, empty = _rewrite(node.body)
        if (begins or ends) and node.hi != 1:
            regex += _ESCAPES  # between two repetitions
        hi = "" if node.hi is None else str(node.hi)
        return f"(?:{regex}){{{node.lo},{hi}}}", begins, ends, empty or node.lo == 0
    raise _Untranslatable  # a back-reference
