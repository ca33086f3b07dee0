"""Log lines x signatures -> ranked matches: "known failure X, caused by Y, fixed by Z here".

Pure and streaming: `explain` takes an iterable of text (single lines or blocks of whole
lines, str or UTF-8 bytes) and never holds the whole log. Ranking rules, in order of weight:
a root cause beats a wrapper line that only echoes it; a signature whose distinguishing
traceback frames (`context`) are in the log beats a look-alike whose frames are not; a
specific signature beats a generic one; and, when the environment is known, a signature
whose conditions hold for it beats one whose conditions do not.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from compat.errors import CompatError
from compat.explain.scan import Scanner, clean, count_lines, dedup_key
from compat.judge.conditions import Outcome, Verdict, evaluate, in_spec
from compat.matrix.signatures import Signature
from compat.matrix.when import When
from compat.model.facts import Facts
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    from compat.matrix import Matrix

MAX_LINES_PER_MATCH = 5
"""Distinct lines kept as evidence for one match (more ranks repeating it only add to a count)."""

MAX_SHOWN = 400
"""Characters of a matched line kept for display."""

_CONTEXT_WINDOW = 256 * 1024
"""How much text before a hit (the current and previous blocks) the context patterns search."""

# Score parts. Only the order they produce matters; see the module docstring.
_BASE = 1.0
_CONTEXT_FOUND = 0.5
_CONTEXT_MISSING = -0.4  # below a generic signature: without its frames the look-alike is the better guess
_GENERIC = -0.3
_ENV_MATCH = 0.5
_ENV_NO_MATCH = -0.5
_WRAPPER_FACTOR = 0.2


@dataclass(frozen=True, kw_only=True)
class MatchedLine:
    number: int
    """1-based line number of the first occurrence."""
    text: str
    """The line without colours and rank/process/time prefixes, cut to MAX_SHOWN characters."""
    count: int = 1
    """How many lines in the log are this line (the same message from several ranks)."""


@dataclass(frozen=True, kw_only=True)
class Match:
    signature: Signature
    """The known failure."""
    score: float
    """Higher is more likely the cause; comparable within one explanation only."""
    lines: tuple[MatchedLine, ...]
    """Evidence from the log, deduplicated across ranks, at most MAX_LINES_PER_MATCH."""
    occurrences: int
    """Every matching line, repeats included."""
    context_found: bool | None
    """Whether a distinguishing frame was in the log; None when the signature has none."""
    verdict: Verdict | None
    """How the environment fits the signature's conditions; None without facts."""
    notes: tuple[str, ...] = ()
    """The fix tailored to the environment ("you have vllm 0.7.1; the fix needs vllm==0.7.2")."""


@dataclass(frozen=True, kw_only=True)
class Explanation:
    matches: tuple[Match, ...]
    """Best first: root causes by score, then wrapper lines."""
    lines_scanned: int
    """Lines read from the log."""
    environment: str
    """What the environment ranking was based on, or why there was none."""

    @property
    def known(self) -> bool:
        """A root cause was recognised (wrapper lines alone do not count)."""
        return any(not m.signature.wrapper for m in self.matches)


@dataclass
class _Acc:
    first: int = 0
    occurrences: int = 0
    lines: dict[str, MatchedLine] = field(default_factory=dict)
    context: bool = False


def explain(
    lines: Iterable[str | bytes],
    matrix: Matrix,
    facts: Facts | None = None,
    *,
    environment: str | None = None,
) -> Explanation:
    """Match a log against the catalog of `matrix` (anything with `.signatures`; its
    `.releases`, when present, tailors fixes) and rank the matches for `facts`."""
    signatures: tuple[Signature, ...] = tuple(matrix.signatures)
    keys: list[tuple[int, str]] = []  # scanner key -> (signature index, "pattern" | "context")
    regexes: list[str] = []
    for si, sig in enumerate(signatures):
        for p in sig.patterns:
            keys.append((si, "pattern"))
            regexes.append(p)
    scanner = _scanner(regexes)
    context_rx = {
        si: (re.compile("|".join(f"(?:{c})" for c in sig.context)), re.compile("|".join(f"(?:{c})" for c in sig.context).encode()))
        for si, sig in enumerate(signatures)
        if sig.context
    }
    acc: dict[int, _Acc] = {}
    line_base = 1
    recent: deque[str | bytes] = deque()  # the last blocks, about _CONTEXT_WINDOW long in all
    recent_len = 0
    for block in lines:
        if not block:
            continue
        hits = scanner.scan_block(block, line_base)
        new_sigs = set()
        for hit in hits:
            si, _ = keys[hit.key]
            a = acc.get(si)
            if a is None:
                a = acc[si] = _Acc(first=hit.line_number)
            a.occurrences += 1
            new_sigs.add(si)
            key = dedup_key(hit.text)
            seen = a.lines.get(key)
            if seen is not None:
                a.lines[key] = MatchedLine(number=seen.number, text=seen.text, count=seen.count + 1)
            elif len(a.lines) < MAX_LINES_PER_MATCH:
                a.lines[key] = MatchedLine(number=hit.line_number, text=clean(hit.text)[:MAX_SHOWN], count=1)
        recent.append(block)
        recent_len += len(block)
        while len(recent) > 1 and recent_len - len(recent[0]) >= _CONTEXT_WINDOW:
            recent_len -= len(recent.popleft())
        # Frames that tell look-alikes apart sit next to the error: search the recent text,
        # only for signatures that just matched (rare), so a big log costs nothing extra.
        pending = [si for si in new_sigs if si in context_rx and not acc[si].context]
        if pending:
            if isinstance(block, (bytes, bytearray)):
                btext = b"".join(b for b in recent if isinstance(b, (bytes, bytearray)))
                found = [si for si in pending if context_rx[si][1].search(btext)]
            else:
                stext = "".join(b for b in recent if isinstance(b, str))
                found = [si for si in pending if context_rx[si][0].search(stext)]
            for si in found:
                acc[si].context = True
        line_base += count_lines(block)
    env_note = environment or ("environment facts given" if facts is not None else "no environment facts: ranked by the log alone")
    matches = [_rank(signatures[si], a, facts, matrix) for si, a in acc.items()]
    matches.sort(key=lambda m: (m.signature.wrapper, -m.score, m.lines[0].number if m.lines else 0, m.signature.id))
    return Explanation(matches=tuple(matches), lines_scanned=line_base - 1, environment=env_note)


_SCANNERS: dict[tuple[str, ...], Scanner] = {}


def _scanner(regexes: list[str]) -> Scanner:
    # Building the prefilter costs milliseconds; a long-lived process explaining many logs
    # against one catalog builds it once.
    key = tuple(regexes)
    scanner = _SCANNERS.get(key)
    if scanner is None:
        scanner = _SCANNERS[key] = Scanner(regexes)
    return scanner


def _rank(sig: Signature, a: _Acc, facts: Facts | None, matrix: Matrix) -> Match:
    score = _BASE
    context_found: bool | None = None
    if sig.context:
        context_found = a.context
        score += _CONTEXT_FOUND if a.context else _CONTEXT_MISSING
    if sig.generic:
        score += _GENERIC
    verdict = None
    notes: list[str] = []
    if facts is not None:
        verdict = evaluate(sig.when, facts)
        if sig.when != When():
            if verdict.outcome is Outcome.MATCH:
                score += _ENV_MATCH
                notes.append("your environment fits: " + "; ".join(verdict.evidence))
            elif verdict.outcome is Outcome.NO_MATCH:
                score += _ENV_NO_MATCH
                notes.append(f"your environment does not fit this signature ({verdict.failed})")
            else:
                notes.append("cannot check: " + "; ".join(verdict.missing))
        notes.extend(tailor_fix(sig, facts, matrix))
    if sig.wrapper:
        score *= _WRAPPER_FACTOR
    return Match(
        signature=sig,
        score=round(score, 3),
        lines=tuple(sorted(a.lines.values(), key=lambda ln: ln.number)),
        occurrences=a.occurrences,
        context_found=context_found,
        verdict=verdict,
        notes=tuple(notes),
    )


def tailor_fix(sig: Signature, facts: Facts, matrix: Matrix | None = None) -> list[str]:
    """The fix's requirements compared with what is installed, and what a pinned fix would
    pull in ("vllm 0.7.2 requires torch==2.5.1; you have torch 2.5.1")."""
    notes: list[str] = []
    for text in sig.fix.requires:
        req = Requirement(text)
        dist = facts.package(req.name)
        if isinstance(dist, Unknown):
            notes.append(f"cannot compare with {req.name}: {dist.reason}")
            continue
        if dist is None:
            notes.append(f"{req.name} is not installed; the fix needs {text}")
            continue
        spec = str(req.specifier)
        if spec and in_spec(dist.version, req.specifier):
            notes.append(f"you have {req.name} {dist.version}, which already satisfies {spec}: the cause is likely elsewhere")
            continue
        notes.append(f"you have {req.name} {dist.version}; the fix needs {text}")
        pinned = _pinned_version(req)
        if pinned is not None:
            notes.extend(_pulled_in(req.name, pinned, facts, matrix))
    return notes


def _pinned_version(req: Requirement) -> str | None:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
        return specs[0].version
    return None


def _pulled_in(name: str, version: str, facts: Facts, matrix: Matrix | None) -> list[str]:
    releases = getattr(matrix, "releases", None)
    if releases is None:
        return []
    try:
        pkg = releases.get(name)
    except (CompatError, OSError):
        # The release index is optional for explain: without it the fix is simply not tailored.
        return []
    if pkg is None:
        return []
    release = next((r for r in pkg.releases if str(r.version) == version), None)
    if release is None or not release.requires:
        return []
    out = []
    for dep in release.requires:
        if dep.marker is not None and "extra" in str(dep.marker):
            continue
        have = facts.package(dep.name)
        if isinstance(have, Unknown) or have is None or not str(dep.specifier):
            continue
        ok = in_spec(have.version, dep.specifier)
        verdict = "which you have" if ok else "installing it will replace it"
        out.append(f"{name} {version} needs {canonicalize_name(dep.name)}{dep.specifier}; you have {have.version} ({verdict})")
    return out
