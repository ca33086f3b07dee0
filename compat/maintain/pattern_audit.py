"""The catastrophic-backtracking audit of the catalog's regexes, decided from their structure.

Python's regex engine backtracks, so a pattern in which one piece of text can be matched in
many ways explodes on a long line that almost matches. Timing each pattern on adversarial
input found such patterns but failed on a loaded machine; this audit instead rejects the
shapes that cause it, so the answer is the same on every run and every machine:

- a repeated group that holds an unbounded quantifier (`(a+)+`, `(\\w+\\s?)*`, `(.*a){12}`),
  unless every repetition must start or end with a character none of those quantifiers can
  match (`(?:\\d+\\.){3}`, `(?:[^,]+,)*` are fine: the delimiter fixes where each one ends);
- a repeated group holding an alternation whose branches can start with the same character or
  match nothing (`(a|ab)*`, `(\\s|\\n)+`): each repetition may take either branch;
- two unbounded quantifiers that can match the same character with nothing required between
  them (`\\d+\\d*`, `.*\\s*.*`): the text between them can be split in as many ways as it is long;
- an unbounded quantifier the match can start with (`\\w*\\.?(forward|loss)`): search retries it
  at every position of a long run of such characters, each time to the end of the run.

It over-approximates (a few safe patterns are rejected, and are easy to rewrite); it never
runs a pattern.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from compat.errors import MatrixError
from compat.matrix.pattern_syntax import (
    SAMPLE_CHARS,
    Alt,
    Backref,
    Char,
    Node,
    PatternSyntaxError,
    Repeat,
    Seq,
    Zero,
    matched_chars,
    parse_pattern,
)
from compat.matrix.signatures import Signature


class Hazard(Enum):
    """Why a pattern can backtrack catastrophically."""

    NESTED_QUANTIFIER = "nested-quantifier"
    """A repeated group holds an unbounded quantifier and no delimiter."""
    OVERLAPPING_ALTERNATIVES = "overlapping-alternatives"
    """A repeated group holds alternatives that can match the same text."""
    ADJACENT_QUANTIFIERS = "adjacent-quantifiers"
    """Two unbounded quantifiers over overlapping characters with nothing required between."""
    LEADING_QUANTIFIER = "leading-quantifier"
    """A match can start with an unbounded quantifier, which search retries at every position."""
    UNREADABLE = "unreadable"
    """The audit cannot read the pattern's structure, so it cannot vouch for it."""


@dataclass(frozen=True, kw_only=True)
class PatternProblem:
    signature: str
    """Id of the signature that holds the pattern."""
    field: str
    """Which pattern (`patterns[0]`, `context[1]`)."""
    pattern: str
    """The pattern itself."""
    hazard: Hazard
    """What is wrong with it."""


_ALL = frozenset(SAMPLE_CHARS)


def _chars(node: Node) -> frozenset[str]:
    """Characters any match of `node` may contain."""
    if isinstance(node, Char):
        return matched_chars(node)
    if isinstance(node, Seq):
        return frozenset().union(*(_chars(i) for i in node.items))
    if isinstance(node, Alt):
        return frozenset().union(*(_chars(o) for o in node.options))
    if isinstance(node, Repeat):
        return _chars(node.body) if node.hi != 0 else frozenset()
    if isinstance(node, Backref):
        return _ALL
    return frozenset()


def _nullable(node: Node) -> bool:
    """Whether `node` can match the empty string."""
    if isinstance(node, Seq):
        return all(_nullable(i) for i in node.items)
    if isinstance(node, Alt):
        return any(_nullable(o) for o in node.options)
    if isinstance(node, Repeat):
        return node.lo == 0 or _nullable(node.body)
    return not isinstance(node, Char)


def _edge(node: Node, *, last: bool) -> frozenset[str]:
    """Characters a non-empty match of `node` may start (or, with last, end) with."""
    if isinstance(node, Char):
        return matched_chars(node)
    if isinstance(node, Seq):
        out: frozenset[str] = frozenset()
        for item in reversed(node.items) if last else node.items:
            out |= _edge(item, last=last)
            if not _nullable(item):
                break
        return out
    if isinstance(node, Alt):
        return frozenset().union(*(_edge(o, last=last) for o in node.options))
    if isinstance(node, Repeat):
        return _edge(node.body, last=last) if node.hi != 0 else frozenset()
    if isinstance(node, Backref):
        return _ALL
    return frozenset()


def _walk(node: Node) -> Iterator[Node]:
    yield node
    if isinstance(node, Seq):
        for item in node.items:
            yield from _walk(item)
    elif isinstance(node, Alt):
        for option in node.options:
            yield from _walk(option)
    elif isinstance(node, Repeat):
        yield from _walk(node.body)


def _unbounded_inside(node: Node) -> list[Repeat]:
    return [n for n in _walk(node) if isinstance(n, Repeat) and n.hi is None and _chars(n.body)]


def _delimited(body: Node, inner: Sequence[Repeat]) -> bool:
    """Whether every repetition of `body` starts or ends with a required character that none
    of the inner quantifiers can match (so the repetitions cannot trade text)."""
    items = body.items if isinstance(body, Seq) else (body,)
    inner_chars = frozenset().union(*(_chars(r.body) for r in inner))
    ends = [items[0], items[-1]] if items else []
    return any(isinstance(e, Char) and not matched_chars(e) & inner_chars for e in ends)


def _flatten(items: Sequence[Node]) -> list[Node]:
    out: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            out.extend(_flatten(item.items))
        else:
            out.append(item)
    return out


def hazards(pattern: str) -> tuple[Hazard, ...]:
    """Every hazard found in `pattern`, each once, in Hazard order; empty when it is safe."""
    try:
        tree = parse_pattern(pattern).tree
    except PatternSyntaxError:
        return (Hazard.UNREADABLE,)
    found: set[Hazard] = set()
    for node in _walk(tree):
        if isinstance(node, Repeat) and (node.hi is None or node.hi > 1):
            inner = _unbounded_inside(node.body)
            if inner and not _delimited(node.body, inner):
                found.add(Hazard.NESTED_QUANTIFIER)
            for alt in (n for n in _walk(node.body) if isinstance(n, Alt)):
                if _overlapping(alt.options):
                    found.add(Hazard.OVERLAPPING_ALTERNATIVES)
        if isinstance(node, Seq) and _adjacent(_flatten(node.items)):
            found.add(Hazard.ADJACENT_QUANTIFIERS)
    if _leading(tree):
        found.add(Hazard.LEADING_QUANTIFIER)
    return tuple(h for h in Hazard if h in found)


def _overlapping(options: Sequence[Node]) -> bool:
    if any(_nullable(o) for o in options):
        return True
    seen: frozenset[str] = frozenset()
    for option in options:
        first = _edge(option, last=False)
        if first & seen:
            return True
        seen |= first
    return False


def _adjacent(items: Sequence[Node]) -> bool:
    # For each unbounded quantifier, the characters still "open" from earlier unbounded
    # quantifiers reachable through only optional elements.
    open_chars: frozenset[str] = frozenset()
    for item in items:
        if isinstance(item, Repeat) and item.hi is None:
            mine = _chars(item.body)
            if mine & open_chars:
                return True
            # At least one required character of its own: earlier quantifiers cannot reach past it.
            open_chars = open_chars | mine if _nullable(item) else mine
        elif isinstance(item, Zero) or _nullable(item):
            continue
        else:
            open_chars = frozenset()
    return False


def _leading(node: Node) -> bool:
    if isinstance(node, Alt):
        return any(_leading(o) for o in node.options)
    items = _flatten(node.items) if isinstance(node, Seq) else [node]
    if items and items[0] in (Zero(source="^"), Zero(source="\\A")):
        return False  # anchored: search fails at once everywhere but the start
    for item in items:
        if isinstance(item, Repeat) and item.hi is None and _chars(item.body):
            return True
        if isinstance(item, (Alt, Repeat)) and _leading(item if isinstance(item, Alt) else item.body):
            return True
        if not _nullable(item):
            return False
    return False


def audit_signatures(signatures: Sequence[Signature]) -> tuple[PatternProblem, ...]:
    """Every pattern and context pattern of `signatures` that could backtrack catastrophically."""
    out = []
    for sig in signatures:
        for kind, patterns in (("patterns", sig.patterns), ("context", sig.context)):
            for i, pattern in enumerate(patterns):
                for hazard in hazards(pattern):
                    out.append(PatternProblem(signature=sig.id, field=f"{kind}[{i}]", pattern=pattern, hazard=hazard))
    return tuple(out)


def check_patterns(signatures: Sequence[Signature]) -> None:
    """Raise MatrixError naming the first pattern that could backtrack catastrophically."""
    problems = audit_signatures(signatures)
    if problems:
        first = problems[0]
        raise MatrixError(
            "matrix/signatures",
            f"{first.signature}.{first.field}",
            f"regex backtracks catastrophically ({first.hazard.value}): {first.pattern!r}",
        )
