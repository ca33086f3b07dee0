"""Known failures: the catalog under matrix/signatures/*.toml."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from compat.findings import Fix, Severity
from compat.matrix._toml import Table
from compat.matrix.when import When, parse_when

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, kw_only=True)
class Signature:
    id: str
    """Stable forever; lowercase words joined by hyphens."""
    area: str
    """The catalog file it lives in (cuda, nccl, vllm, trl, ...)."""
    title: str
    severity: Severity
    patterns: tuple[str, ...]
    """Python regexes searched in each log line; empty for a failure that prints nothing (a hang)."""
    when: When
    """Conditions under which an environment is exposed to this failure."""
    cause: str
    fix: Fix
    refs: tuple[str, ...]
    """Upstream issues and PRs ("huggingface/trl#2856")."""
    wrapper: bool = False
    """True for lines that only echo another failure (ChildFailedError): ranked below root causes."""
    doctor: bool = True
    """False when the conditions are too broad to warn about before a run (only explain uses it)."""


_REF = re.compile(r"^([\w.-]+/[\w.-]+(#\d+|@[\w.-]+)|https?://\S+|pypi:[\w.-]+(==[\w.+-]+)?)$")


def parse_signature(t: Table, area: str) -> Signature:
    t.only("id", "title", "severity", "patterns", "when", "cause", "fix", "refs", "wrapper", "doctor")
    sid = t.str("id")
    if not _ID.match(sid):
        t.fail("id", f"{sid!r} must be lowercase words joined by hyphens")
    severity_text = t.str("severity")
    try:
        severity = Severity(severity_text)
    except ValueError:
        t.fail("severity", f"{severity_text!r} is not one of error, warning, info")
    patterns = t.strs("patterns")
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            t.fail(f"patterns[{i}]", f"does not compile: {exc}")
    fix_t = t.table("fix")
    fix_t.only("requires", "advice")
    fix = Fix(
        requires=tuple(str(r) for r in fix_t.requirements("requires", ())),
        advice=fix_t.str("advice", ""),
    )
    if not fix.requires and not fix.advice:
        fix_t.fail("", "needs requires or advice")
    refs = t.strs("refs")
    if not refs:
        t.fail("refs", "at least one upstream reference is required")
    for i, ref in enumerate(refs):
        if not _REF.match(ref):
            t.fail(f"refs[{i}]", f"{ref!r} is not owner/repo#N, owner/repo@tag, pypi:name==ver or a URL")
    return Signature(
        id=sid,
        area=area,
        title=t.str("title"),
        severity=severity,
        patterns=patterns,
        when=parse_when(t.table("when")) if "when" in t else When(),
        cause=t.str("cause"),
        fix=fix,
        refs=refs,
        wrapper=t.bool("wrapper", False),
        doctor=t.bool("doctor", True),
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
