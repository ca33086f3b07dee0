"""Known failures: the catalog under matrix/signatures/*.toml.

Loading validates the shape of every entry (and that each regex compiles) and stays fast;
`check_patterns` is the slower audit that `compat matrix validate` and the tests run: it
times every pattern against adversarial input in a child process and rejects the ones that
backtrack catastrophically.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compat.errors import MatrixError
from compat.matrix._toml import Table, read_toml
from compat.matrix.when import When, parse_when
from compat.model.findings import Fix, Severity

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class Signature:
    id: str
    """Stable forever; lowercase words joined by hyphens."""
    area: str
    """The catalog file it lives in (cuda, nccl, vllm, trl, ...)."""
    title: str
    """One line naming the failure."""
    severity: Severity
    """How bad the failure is when it happens."""
    patterns: tuple[str, ...]
    """Python regexes searched in each log line; empty for a failure that prints nothing (a hang)."""
    when: When
    """Conditions under which an environment is exposed to this failure."""
    cause: str
    """Why it happens, for a person."""
    fix: Fix
    """Requirements and/or actions that clear it."""
    refs: tuple[str, ...]
    """Upstream issues and PRs ("huggingface/trl#2856")."""
    wrapper: bool = False
    """True for lines that only echo another failure (ChildFailedError): ranked below root causes."""
    doctor: bool = True
    """False when the conditions are too broad to warn about before a run (only explain uses it)."""
    context: tuple[str, ...] = ()
    """Regexes for other lines of the same log (traceback frames) that tell this failure from a
    look-alike with the same message; explain ranks a match higher when one of them is present
    and lower when none is."""
    generic: bool = False
    """True for a catch-all message (plain CUDA OOM, NCCL timeout) that a more specific signature
    on the same log should outrank."""


_REF = re.compile(r"^([\w.-]+/[\w.-]+(#\d+|@[\w.-]+)|https?://\S+|pypi:[\w.-]+(==[\w.+-]+)?)$")
_KEYS = (
    "id", "title", "severity", "patterns", "when", "cause", "fix", "refs", "wrapper", "doctor",
    "context", "generic",
)


def _regexes(t: Table, key: str, default: object) -> tuple[str, ...]:
    patterns = t.strs(key, default)
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            t.fail(f"{key}[{i}]", f"does not compile: {exc}")
    return patterns


def parse_signature(t: Table, area: str) -> Signature:
    t.only(*_KEYS)
    sid = t.str("id")
    if not _ID.match(sid):
        t.fail("id", f"{sid!r} must be lowercase words joined by hyphens")
    severity_text = t.str("severity")
    try:
        severity = Severity(severity_text)
    except ValueError:
        t.fail("severity", f"{severity_text!r} is not one of error, warning, info")
    patterns = _regexes(t, "patterns", ...)
    for i, pattern in enumerate(patterns):
        if re.search(pattern, ""):
            t.fail(f"patterns[{i}]", "matches an empty line: it would match every log")
    fix_t = t.table("fix")
    fix_t.only("requires", "advice")
    fix = Fix(
        requires=tuple(str(r) for r in fix_t.requirements("requires", ())),
        advice=fix_t.str("advice", None) or "",
    )
    if not fix.requires and not fix.advice:
        fix_t.fail("", "needs requires or advice")
    refs = t.strs("refs")
    if not refs:
        t.fail("refs", "at least one upstream reference is required")
    for i, ref in enumerate(refs):
        if not _REF.match(ref):
            t.fail(f"refs[{i}]", f"{ref!r} is not owner/repo#N, owner/repo@tag, pypi:name==ver or a URL")
    if "when" not in t:
        t.fail("when", "missing (use `when = {}` for a failure that does not depend on the environment)")
    when = parse_when(t.table("when"))
    doctor = t.bool("doctor", True)
    if doctor and when == When():
        t.fail("doctor", "a signature with an empty `when` would warn on every environment; set doctor = false")
    return Signature(
        id=sid,
        area=area,
        title=t.str("title"),
        severity=severity,
        patterns=patterns,
        when=when,
        cause=t.str("cause"),
        fix=fix,
        refs=refs,
        wrapper=t.bool("wrapper", False),
        doctor=doctor,
        context=_regexes(t, "context", ()),
        generic=t.bool("generic", False),
    )


def load_signatures(files: Sequence[tuple[Table, str]]) -> tuple[Signature, ...]:
    """Signatures from (table, area) pairs; ids must be unique across every file."""
    seen: dict[str, str] = {}
    out = []
    for table, area in files:
        table.only("signature")
        for st in table.tables("signature", ()):
            sig = parse_signature(st, area)
            if sig.id in seen:
                st.fail("id", f"{sig.id!r} is already defined in {seen[sig.id]}")
            seen[sig.id] = table.file
            out.append(sig)
    return tuple(out)


def load_signature_dir(directory: Path, *, label: str | None = None) -> tuple[Signature, ...]:
    """Every signature in `directory`/*.toml (a catalog on its own, without the rest of the matrix)."""
    files = []
    for path in sorted(directory.glob("*.toml")):
        name = f"{label}/{path.name}" if label else str(path)
        files.append((read_toml(path, label=name), path.stem))
    return load_signatures(files)


# --- the catastrophic-backtracking audit -------------------------------------------------

PATTERN_BUDGET_S = 0.25
"""Longest a single pattern may spend on one adversarial line (a sane regex needs microseconds)."""

_ADVERSARIAL_LENGTH = 20_000

# Runs in a child interpreter so a pattern stuck in C can be stopped from outside; inside,
# SIGALRM interrupts the regex engine (it checks for signals while it backtracks).
_CHILD = r"""
import json, re, signal, sys, time
budget = float(sys.argv[1])
class Slow(Exception):
    pass
def alarm(signum, frame):
    raise Slow()
signal.signal(signal.SIGALRM, alarm)
jobs = json.loads(sys.stdin.read())
for key, pattern, texts in jobs:
    rx = re.compile(pattern)
    worst = 0.0
    for text in texts:
        signal.setitimer(signal.ITIMER_REAL, budget)
        start = time.perf_counter()
        try:
            rx.search(text)
        except Slow:
            worst = None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if worst is None:
            break
        worst = max(worst, time.perf_counter() - start)
    print(json.dumps([key, worst]), flush=True)
"""


def adversarial_inputs(pattern: str) -> list[str]:
    """Lines built from the pattern's own pieces, repeated, with a tail that fails the match:
    the input shape on which nested or overlapping quantifiers explode."""
    pieces: list[str] = []
    for lit in re.findall(r"(?:\\.|[^\\()|\[\]*+?{}^$])+", pattern):
        text = re.sub(r"\\d", "7", lit)
        text = re.sub(r"\\w", "a", text)
        text = re.sub(r"\\s", " ", text)
        text = re.sub(r"\\(.)", r"\1", text)
        if text:
            pieces.append(text)
    samples = {"a", "7", " ", "a ", "7.", "_", "-", ".", ":", "=", "ab1 "} | set(pieces)
    n = _ADVERSARIAL_LENGTH
    out = []
    for s in sorted(samples):
        body = (s * (n // max(len(s), 1) + 1))[:n]
        out.append(body + "\x00!")
        out.append(body)
    joined = "".join(pieces)
    if joined:
        out.append((joined * (n // len(joined) + 1))[:n] + "\x00")
    return out


def check_patterns(signatures: Sequence[Signature], *, budget_s: float = PATTERN_BUDGET_S) -> None:
    """Raise MatrixError naming the first pattern that takes longer than `budget_s` on an
    adversarial line (or that cannot be audited at all)."""
    jobs = []
    where: dict[str, str] = {}
    for sig in signatures:
        for kind in ("patterns", "context"):
            for i, pattern in enumerate(getattr(sig, kind)):
                key = f"{sig.id}.{kind}[{i}]"
                where[key] = sig.id
                jobs.append((key, pattern, adversarial_inputs(pattern)))
    if not jobs:
        return
    # A pattern that ignores the alarm still cannot hang the audit: the child has a hard limit.
    limit = 30 + budget_s * 4 * len(jobs)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(budget_s)],
            input=json.dumps(jobs),
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired as exc:
        done = {json.loads(line)[0] for line in (exc.stdout or "").splitlines() if line.strip()}
        stuck = next((key for key, _, _ in jobs if key not in done), "?")
        raise MatrixError("matrix/signatures", stuck, f"regex did not finish within {limit:.0f} s on adversarial input") from exc
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    for key, worst in results:
        if worst is None:
            raise MatrixError(
                "matrix/signatures", key,
                f"regex backtracks catastrophically (over {budget_s} s on a {_ADVERSARIAL_LENGTH}-character adversarial line)",
            )
    if len(results) != len(jobs):
        raise MatrixError("matrix/signatures", "", f"pattern audit failed: {proc.stderr.strip()[-300:]}")
