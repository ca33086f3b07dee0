"""Renderers for `compat explain`: plain text and JSON. Pure: an Explanation in, str out."""

from __future__ import annotations

import json

from compat.explain.match import Explanation, Match

SCHEMA_VERSION = 1


def render_json(explanation: Explanation, *, top: int | None = None) -> str:
    matches = explanation.matches[:top] if top else explanation.matches
    doc = {
        "schema_version": SCHEMA_VERSION,
        "known": explanation.known,
        "lines_scanned": explanation.lines_scanned,
        "environment": explanation.environment,
        "matches": [_match_json(m) for m in matches],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _match_json(m: Match) -> dict:
    sig = m.signature
    return {
        "id": sig.id,
        "title": sig.title,
        "severity": sig.severity.value,
        "score": m.score,
        "wrapper": sig.wrapper,
        "occurrences": m.occurrences,
        "lines": [{"number": ln.number, "text": ln.text, "count": ln.count} for ln in m.lines],
        "cause": sig.cause,
        "fix": {"requires": list(sig.fix.requires), "advice": sig.fix.advice, "notes": list(m.notes)},
        "environment": None if m.verdict is None else {
            "outcome": m.verdict.outcome.value,
            "evidence": list(m.verdict.evidence),
            "missing": list(m.verdict.missing),
            "failed": m.verdict.failed,
        },
        "refs": list(sig.refs),
    }


def render_text(explanation: Explanation, *, top: int | None = None) -> str:
    matches = explanation.matches[:top] if top else explanation.matches
    out: list[str] = []
    if not explanation.known:
        out.append(f"No known signature in {explanation.lines_scanned} line(s) of log.")
        wrappers = [m for m in matches if m.signature.wrapper]
        if wrappers:
            out.append("Only wrapper lines matched; the real error is earlier in the log or on another rank:")
            for m in wrappers:
                out.append(f"  - {m.signature.title} (line {m.lines[0].number})")
        else:
            out.append("The error does not look like an environment problem compat knows; read the first traceback.")
        return "\n".join(out) + "\n"
    roots = [m for m in matches if not m.signature.wrapper]
    plural = "s" if len(roots) > 1 else ""
    out.append(
        f"Known failure{plural} in {explanation.lines_scanned} line(s) of log, most likely first ({explanation.environment}):"
    )
    for i, m in enumerate(matches, 1):
        sig = m.signature
        out.append("")
        tag = "wrapper" if sig.wrapper else sig.severity.value
        out.append(f"{i}. [{tag}] {sig.title}")
        out.append(f"   id: {sig.id}   score: {m.score}   matched lines: {m.occurrences}")
        for ln in m.lines:
            times = f" (x{ln.count})" if ln.count > 1 else ""
            out.append(f"   line {ln.number}{times}: {ln.text}")
        if sig.wrapper:
            continue
        out.append(f"   cause: {sig.cause}")
        fix = []
        if sig.fix.requires:
            fix.append("install " + ", ".join(sig.fix.requires))
        if sig.fix.advice:
            fix.append(sig.fix.advice)
        out.append("   fix: " + ". ".join(fix))
        for note in m.notes:
            out.append(f"   - {note}")
        out.append("   refs: " + ", ".join(sig.refs))
    return "\n".join(out) + "\n"
