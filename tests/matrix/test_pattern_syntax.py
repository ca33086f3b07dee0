"""The regex reader behind the pure-Python prefilter and the automaton check: it must read every
shipped pattern the same way on every Python (no private `re` modules), the prefilter must never
change what matches, and both engines must find the same lines."""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

import pytest

from compat.explain import literals as literal_text
from compat.explain import scan
from compat.explain.scan import Scanner, required_literals
from compat.matrix import shipped_matrix_dir
from compat.matrix.pattern_syntax import (
    Alt,
    Backref,
    Char,
    PatternSyntaxError,
    Repeat,
    Seq,
    Zero,
    engine_problems,
    parse_pattern,
)
from compat.matrix.signatures import load_signature_dir

COMPAT = Path(__file__).resolve().parents[2] / "compat"
LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"


# Loaded by the tests that use them, once per process, not at collection (every process that collects would pay
# for it, about a second); likewise the recorded lines and the pure-Python engine's hits on them, which three
# tests compare against.
@functools.cache
def _signatures() -> tuple:
    return tuple(load_signature_dir(shipped_matrix_dir() / "signatures", label="matrix/signatures"))


@functools.cache
def _patterns() -> list[str]:
    return sorted({p for s in _signatures() for p in (*s.patterns, *s.context)})


def test_no_module_uses_the_private_regex_parser():
    # 3.10 has sre_parse, 3.11+ re._parser: either name ties compat to some Pythons.
    users = []
    for path in COMPAT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
                names = [f"re.{node.attr}"]
            users += [f"{path.relative_to(COMPAT)}: {n}" for n in names if n.startswith(("sre_", "re._"))]
    assert users == []


def test_the_tree_of_a_pattern():
    tree = parse_pattern(r"^(a)(?:b|[cd]\d+)*?(?=x)\1{2,}").tree
    assert isinstance(tree, Seq)
    anchor, group, rep, look, back = tree.items
    assert anchor == Zero(source="^") and isinstance(look, Zero)
    assert group == Seq(items=(Char(source="a", flags=0, literal="a"),))
    assert isinstance(rep, Repeat) and (rep.lo, rep.hi) == (0, None)
    assert isinstance(rep.body, Alt) and len(rep.body.options) == 2
    assert back == Repeat(body=Backref(group="1"), lo=2, hi=None)


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (r"cuda:\d+ and (cpu|meta) tensors", {" tensors"}),
        (r"foo(bar)?bazz|quux", {"bazz", "quux"}),
        (r"x{3}\x41\u00e9\N{BULLET}\101\0end!", {"A\u00e9\u2022A\x00end!"}),
        (r"lib[.]so[\]]\.12", {"lib.so].12"}),  # one-character sets are literals
        (r"(?P<name>abcd)(?P=name)(?#note)efgh", {"abcd"}),
        (r"(?i:ERROR) in module", {" in module"}),  # a case-insensitive part is no literal
        (r"(?x) long \ text  # comment", {"long text"}),
        (r"(?<=prefix)matched(?!suffix)", {"matched"}),
        (r"a{,3}bcde{2}", {"bcd"}),
    ],
)
def test_required_literals(pattern, literals):
    # "a{,3}bcde{2}" keeps "bcd" only: a repeat ends a run of literal text.
    expected = {lit for lit in literals if len(lit) >= scan.MIN_LITERAL} or None
    assert required_literals(pattern) == (frozenset(expected) if expected else None)


@pytest.mark.parametrize("pattern", [r"(?i)anything goes", r"\d+\w*", r"(?:foo(?(1)bar))", r"a|\w+"])
def test_no_required_literal(pattern):
    assert required_literals(pattern) is None


@pytest.mark.parametrize("pattern", [r"unbalanced(", r"\q", r"a**"])
def test_what_re_rejects_is_not_read(pattern):
    with pytest.raises(PatternSyntaxError):
        parse_pattern(pattern)


@functools.cache
def _recorded_lines() -> tuple[str, ...]:
    lines: list[str] = []
    for log in sorted(LOGS.glob("*.log")):
        lines.extend(log.read_text(encoding="utf-8", errors="replace").splitlines())
    return tuple(lines)


def _lines() -> list[str]:
    return list(_recorded_lines())


def _hits(scanner: Scanner, lines: list[str]) -> list[tuple[int, int]]:
    return [(h.line_number, h.key) for h in scanner.scan_block("\n".join(lines) + "\n")]


@functools.cache
def _python_scanner() -> Scanner:
    return Scanner(_patterns())


@functools.cache
def _python_hits() -> tuple[tuple[int, int], ...]:
    """What the pure-Python engine with its prefilter finds on the recorded lines (what the tests below compare to)."""
    return tuple(_hits(_python_scanner(), _lines()))


def test_the_prefilter_never_changes_what_matches():
    lines = _lines()
    patterns = _patterns()
    assert _python_scanner().unfiltered == ()
    compiled = [re.compile(p, re.ASCII) for p in patterns]
    brute = [(n, k) for n, line in enumerate(lines, 1) for k, rx in enumerate(compiled) if rx.search(line)]
    assert len({k for _, k in brute}) > len(patterns) // 2  # the recorded logs exercise most patterns
    assert list(_python_hits()) == brute


def test_without_a_reader_every_pattern_runs_on_every_line_with_the_same_result(monkeypatch):
    """The fallback: had the reader failed (a new syntax, a new Python), nothing is lost."""
    lines = _lines()
    patterns = _patterns()
    expected = list(_python_hits())

    def unreadable(pattern: str) -> object:
        raise PatternSyntaxError("as if this Python's syntax were unknown")

    monkeypatch.setattr(literal_text, "parse_pattern", unreadable)
    fallback = Scanner(patterns)
    assert fallback.unfiltered == tuple(patterns)
    assert _hits(fallback, lines) == expected


# --- what an automaton cannot run -----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"(a)\1", "a back-reference"),
        (r"(?P<n>a)(?P=n)", "a back-reference"),
        (r"foo(?=bar)", "a lookaround"),
        (r"(?<!x)y", "a lookaround"),
        pytest.param(r"(?>ab)c", "an atomic group", marks=pytest.mark.skipif(sys.version_info < (3, 11), reason="3.11+ syntax")),
        (r"(a)?(?(1)b|c)", "a conditional group"),
        (r"\Afoo", "\\A or \\Z"),
        # 3.10 still compiles whole-pattern flags in the middle (with a warning), 3.11+ refuses.
        pytest.param(r"a(?i)b", "unreadable", marks=pytest.mark.filterwarnings("ignore::DeprecationWarning")),
    ],
)
def test_what_an_automaton_cannot_run_is_named(pattern, problem):
    assert any(problem in p for p in engine_problems(pattern))


@pytest.mark.parametrize("pattern", [r"v(?:\d+\.){3}\d+", r"(a+)+$", r"x(?:ab|cd)+", r"^\w+:", r"(?i)error"])
def test_what_an_automaton_runs_passes(pattern):
    assert engine_problems(pattern) == ()


def test_every_shipped_pattern_runs_on_an_automaton():
    assert [(s.id, p) for s in _signatures() for p in (*s.patterns, *s.context) if engine_problems(p)] == []


def test_both_engines_find_the_same_lines():
    pytest.importorskip("hyperscan")
    from compat.explain.scan import Engine, make_scanner

    lines = _lines()
    fast = make_scanner(_patterns(), Engine.HYPERSCAN)
    assert fast.engine is Engine.HYPERSCAN
    assert _hits(fast, lines) == list(_python_hits())
