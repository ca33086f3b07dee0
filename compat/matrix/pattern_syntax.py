"""The shape of a catalog regex, read with public means only.

The pure-Python scanner's literal prefilter needs the structure of a pattern (which characters
every match must contain), and the catalog's validation needs to know whether a pattern uses
what an automaton cannot run (back-references, lookaround, conditionals, atomic groups,
possessive quantifiers, `\\A`/`\\Z`): a pattern without those runs in time linear in the line, on
every engine. CPython's own parser is private and renamed between versions (`sre_parse` up to
3.10, `re._parser` from 3.11), so this module reads Python's `re` syntax itself into a small tree.
It only has to be right about patterns that `re.compile` accepts; what it does not understand
raises PatternSyntaxError, and callers fall back to a safe answer (no prefilter, or rejected).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass


class PatternSyntaxError(ValueError):
    """A pattern this reader does not understand (callers fall back, never guess)."""


@dataclass(frozen=True, kw_only=True)
class Char:
    source: str
    """The regex text of this one-character element (`a`, `\\d`, `[^,]`, `.`)."""
    flags: int
    """The `re` flags in force where it stands (IGNORECASE, DOTALL, ASCII matter)."""
    literal: str | None
    """The one character it matches, when exactly one and case-sensitive; else None."""


@dataclass(frozen=True, kw_only=True)
class Seq:
    items: tuple[Node, ...]
    """Elements matched one after another; a group inside a sequence is a nested node."""


@dataclass(frozen=True, kw_only=True)
class Alt:
    options: tuple[Node, ...]
    """Alternatives, any one of which matches (`a|b`, or a conditional's two branches)."""


@dataclass(frozen=True, kw_only=True)
class Repeat:
    body: Node
    """What is repeated."""
    lo: int
    """Fewest repetitions."""
    hi: int | None
    """Most repetitions; None for unbounded (`*`, `+`, `{m,}`)."""


@dataclass(frozen=True, kw_only=True)
class Zero:
    """A zero-width assertion: anchors, word boundaries, lookarounds (their bodies are not
    part of the match, so they are not kept)."""

    source: str
    """Its regex text."""


@dataclass(frozen=True, kw_only=True)
class Backref:
    group: str
    """The group it repeats (number or name): it can match any text."""


Node = Char | Seq | Alt | Repeat | Zero | Backref


@dataclass(frozen=True, kw_only=True)
class Parsed:
    tree: Node
    """The pattern's structure."""
    flags: int
    """Flags set for the whole pattern by a leading `(?i)`-style group."""
    unsupported: tuple[str, ...] = ()
    """What an automaton cannot run, as read ("a back-reference", "a lookaround", ...)."""


# Plain ints: `RegexFlag` arithmetic goes through the enum machinery, which was a third of the
# time of reading the catalog.
_FLAGS = {"a": re.ASCII, "i": re.IGNORECASE, "L": re.LOCALE, "m": re.MULTILINE, "s": re.DOTALL, "u": re.UNICODE, "x": re.VERBOSE}
_FLAG_LETTERS = {letter: int(flag) for letter, flag in _FLAGS.items()}
_VERBOSE = int(re.VERBOSE)
_IGNORECASE = int(re.IGNORECASE)
_SIMPLE_ESCAPES = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_CLASS_ESCAPES = frozenset("dDsSwW")
_ZERO_ESCAPES = frozenset("AZbB")
_QUANT = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")


@functools.lru_cache(maxsize=2048)
def parse_pattern(pattern: str) -> Parsed:
    """The structure of `pattern` (which must also compile with `re`); remembered, as loading
    the catalog, the prefilter and the colour automaton each read every pattern."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise PatternSyntaxError(f"does not compile: {exc}") from exc
    reader = _Reader(pattern)
    tree = reader.run()
    return Parsed(tree=tree, flags=reader.global_flags, unsupported=tuple(dict.fromkeys(reader.unsupported)))


def engine_problems(pattern: str) -> tuple[str, ...]:
    """What in `pattern` an automaton (Hyperscan, RE2) cannot compile; empty when it can."""
    try:
        return parse_pattern(pattern).unsupported
    except PatternSyntaxError as exc:
        return (f"unreadable ({exc})",)


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.global_flags = 0
        self.unsupported: list[str] = []

    def run(self) -> Node:
        self._leading_flags()
        node = self._alt(self.global_flags)
        if self.i != len(self.p):
            raise PatternSyntaxError(f"unexpected {self.p[self.i]!r} at {self.i}")
        return node

    def _leading_flags(self) -> None:
        # Whole-pattern flags are only read at the start: 3.10 still accepts them later (and
        # applies them to what came before), which this reader refuses rather than mis-reads.
        while True:
            m = re.compile(r"\(\?([aiLmsux]+)\)").match(self.p, self.i)
            if not m:
                return
            for letter in m.group(1):
                self.global_flags |= _FLAG_LETTERS[letter]
            self.i = m.end()

    def _peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def _alt(self, flags: int) -> Node:
        options = [self._seq(flags)]
        while self._peek() == "|":
            self.i += 1
            options.append(self._seq(flags))
        return options[0] if len(options) == 1 else Alt(options=tuple(options))

    def _skip_verbose(self, flags: int) -> None:
        if not flags & _VERBOSE:
            return
        while self.i < len(self.p):
            ch = self.p[self.i]
            if ch in " \t\n\r\f\v":
                self.i += 1
            elif ch == "#":
                end = self.p.find("\n", self.i)
                self.i = len(self.p) if end < 0 else end + 1
            else:
                return

    def _seq(self, flags: int) -> Seq:
        items: list[Node] = []
        while True:
            self._skip_verbose(flags)
            if self.i >= len(self.p) or self.p[self.i] in "|)":
                return Seq(items=tuple(items))
            atom = self._atom(flags)
            if atom is None:
                continue
            items.append(self._quantified(atom, flags))

    def _quantified(self, atom: Node, flags: int) -> Node:
        self._skip_verbose(flags)
        ch = self._peek()
        if ch in ("*", "+", "?"):
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
        elif ch == "{" and (m := _QUANT.match(self.p, self.i)) and m.group(0) != "{}":
            self.i = m.end()
            lo = int(m.group(1)) if m.group(1) else 0
            hi = (int(m.group(3)) if m.group(3) else None) if m.group(2) else lo
        else:
            return atom
        if self._peek() == "+":
            self.unsupported.append("a possessive quantifier")
        if self._peek() in ("?", "+"):  # lazy or possessive: the same language
            self.i += 1
        if isinstance(atom, Zero):
            return atom
        if isinstance(atom, Repeat):
            raise PatternSyntaxError("multiple repeat")
        return Repeat(body=atom, lo=lo, hi=hi)

    def _atom(self, flags: int) -> Node | None:
        p, i = self.p, self.i
        ch = p[i]
        if ch == "(":
            return self._group(flags)
        if ch == "[":
            return self._klass(flags)
        if ch == ".":
            self.i += 1
            return Char(source=".", flags=flags, literal=None)
        if ch in "^$":
            self.i += 1
            return Zero(source=ch)
        if ch in "*+?":
            raise PatternSyntaxError("nothing to repeat")
        if ch == "\\":
            return self._escape(flags)
        self.i += 1
        return self._char(re.escape(ch), ch, flags)

    @staticmethod
    def _char(source: str, ch: str, flags: int) -> Char:
        # Under IGNORECASE even a character without case is left out: the prefilter compares
        # literals case-sensitively and has nothing to gain from the exception.
        return Char(source=source, flags=flags, literal=None if flags & _IGNORECASE else ch)

    def _escape(self, flags: int) -> Node:
        p = self.p
        start = self.i
        if start + 1 >= len(p):
            raise PatternSyntaxError("trailing backslash")
        c = p[start + 1]
        self.i = start + 2
        if c in _ZERO_ESCAPES:
            if c in "AZ":
                self.unsupported.append("\\A or \\Z (use ^ or $: lines are matched one by one)")
            return Zero(source=p[start : self.i])
        if c in _CLASS_ESCAPES:
            return Char(source=p[start : self.i], flags=flags, literal=None)
        if c in _SIMPLE_ESCAPES:
            return self._char(p[start : self.i], _SIMPLE_ESCAPES[c], flags)
        if c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = p[self.i : self.i + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise PatternSyntaxError(f"bad \\{c} escape")
            self.i += width
            return self._char(p[start : self.i], chr(int(digits, 16)), flags)
        if c == "N":
            end = p.find("}", self.i)
            if p[self.i : self.i + 1] != "{" or end < 0:
                raise PatternSyntaxError("bad \\N escape")
            name = p[self.i + 1 : end]
            self.i = end + 1
            try:
                return self._char(p[start : self.i], unicodedata.lookup(name), flags)
            except KeyError as exc:
                raise PatternSyntaxError(f"unknown character name {name!r}") from exc
        if c in "0123456789":
            octal = re.compile(r"0[0-7]{0,2}|[0-7]{3}").match(p, start + 1)
            if octal:
                self.i = octal.end()
                return self._char(p[start : self.i], chr(int(octal.group(0), 8)), flags)
            number = re.compile(r"[0-9]{1,2}").match(p, start + 1)
            assert number is not None
            self.i = number.end()
            self.unsupported.append("a back-reference")
            return Backref(group=number.group(0))
        if c.isascii() and c.isalnum():
            raise PatternSyntaxError(f"bad escape \\{c}")
        return self._char(p[start : self.i], c, flags)

    def _klass(self, flags: int) -> Char:
        p = self.p
        start = self.i
        j = start + 1
        negated = p[j : j + 1] == "^"
        if negated:
            j += 1
        body_start = j
        first = True
        while True:
            if j >= len(p):
                raise PatternSyntaxError("unterminated character set")
            ch = p[j]
            if ch == "]" and not first:
                break
            j += 2 if ch == "\\" else 1
            first = False
        body = p[body_start:j]
        self.i = j + 1
        source = p[start : self.i]
        literal: str | None = None
        if not negated:
            if len(body) == 1 and body not in "\\":
                literal = body
            elif len(body) == 2 and body[0] == "\\" and not body[1].isalnum():
                literal = body[1]
        if literal is not None:
            return self._char(source, literal, flags)
        return Char(source=source, flags=flags, literal=None)

    def _group(self, flags: int) -> Node | None:
        p = self.p
        start = self.i
        self.i += 1
        zero = False
        conditional = False
        if p.startswith("?", self.i):
            rest = p[self.i + 1 :]
            if rest.startswith("#"):
                end = p.find(")", self.i)
                self.i = end + 1
                return None
            if rest.startswith(":"):
                self.i += 2
            elif rest.startswith("P<"):
                end = p.find(">", self.i)
                self.i = end + 1
            elif rest.startswith("P="):
                end = p.find(")", self.i)
                name = p[self.i + 2 : end]
                self.i = end + 1
                self.unsupported.append("a back-reference")
                return Backref(group=name)
            elif rest[:1] in ("=", "!", ">") or rest[:2] in ("<=", "<!"):
                zero = rest[:1] in ("=", "!", "<")
                self.unsupported.append("a lookaround" if zero else "an atomic group")
                self.i += 2 if rest[:1] in ("=", "!", ">") else 3
            elif rest.startswith("("):
                end = p.find(")", self.i)
                self.i = end + 1
                conditional = True
                self.unsupported.append("a conditional group")
            else:
                m = re.compile(r"([aiLmsux]*)(?:-([imsx]+))?:").match(p, self.i + 1)
                if not m:
                    raise PatternSyntaxError(f"whole-pattern flags not at the start, or unknown group at {start}")
                for letter in m.group(1):
                    flags |= _FLAG_LETTERS[letter]
                for letter in m.group(2) or "":
                    flags &= ~_FLAG_LETTERS[letter]
                self.i = m.end()
        body = self._alt(flags)
        if self._peek() != ")":
            raise PatternSyntaxError(f"unbalanced group at {start}")
        self.i += 1
        if zero:
            return Zero(source=p[start : self.i])
        if conditional:
            options = body.options if isinstance(body, Alt) else (body,)
            # Without a "no" branch the group may match nothing.
            return Alt(options=options if len(options) == 2 else (*options, Seq(items=())))
        return body


def backtracking_problems(pattern: str) -> tuple[str, ...]:
    """What in `pattern` makes Python's `re` backtrack exponentially on a line that nearly matches:
    a repeat of unbounded count inside another (`(a+)+`), or alternatives that start alike inside
    one (`(a|aa)+`). Hyperscan runs such a pattern in linear time, but the pure-Python engine (and
    every confirming `re.search`) does not; the catalog refuses them so that no engine can hang."""
    try:
        tree = parse_pattern(pattern).tree
    except PatternSyntaxError as exc:
        return (f"unreadable ({exc})",)
    found: list[str] = []
    _nested(tree, inside=False, found=found)
    return tuple(dict.fromkeys(found))


def _nested(node: Node, *, inside: bool, found: list[str], lead: str | None = None) -> None:
    """`lead`: the literal every iteration of the enclosing unbounded repeat starts with (`(\\.\\d+)*`);
    a repeat inside that cannot match it cannot run into the next iteration, so it is safe."""
    if isinstance(node, Repeat):
        if inside and node.lo != node.hi and (lead is None or any(_may_match(c, lead) for c in _chars(node.body))):
            found.append("a repeat inside an unbounded repeat, as in (a+)+")
        if node.hi is None:
            first = node.body.items[0] if isinstance(node.body, Seq) and node.body.items else node.body
            inner_lead = first.literal if isinstance(first, Char) else None
            _nested(node.body, inside=True, found=found, lead=inner_lead if not inside else lead and inner_lead)
        else:
            _nested(node.body, inside=inside, found=found, lead=lead)
    elif isinstance(node, Seq):
        for item in node.items:
            _nested(item, inside=inside, found=found, lead=lead)
    elif isinstance(node, Alt):
        if inside:
            starts = [_first(option) for option in node.options]
            known = [s for s in starts if s is not None]
            if len(known) != len(set(known)):
                found.append("alternatives that start alike inside an unbounded repeat, as in (a|aa)+")
        for option in node.options:
            _nested(option, inside=inside, found=found, lead=lead)


def _chars(node: Node) -> list[Char]:
    if isinstance(node, Char):
        return [node]
    if isinstance(node, Seq):
        return [c for item in node.items for c in _chars(item)]
    if isinstance(node, Alt):
        return [c for option in node.options for c in _chars(option)]
    if isinstance(node, Repeat):
        return _chars(node.body)
    return []


def _may_match(char: Char, text: str) -> bool:
    try:
        return re.fullmatch(char.source, text, char.flags) is not None
    except re.error:
        return True  # not understood: assume the worst


def _first(node: Node) -> str | None:
    """The source of the first character `node` matches, when it is one fixed element."""
    while True:
        if isinstance(node, Char):
            return node.source
        if isinstance(node, Seq) and node.items:
            node = node.items[0]
        elif isinstance(node, Repeat) and node.lo > 0:
            node = node.body
        else:
            return None
