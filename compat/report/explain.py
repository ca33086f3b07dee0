"""Renderers for `compat explain`: plain text, JSON, a Markdown block and GitHub annotations. Pure: an Explanation in, str out."""

from __future__ import annotations

import json
import re
import textwrap

from compat.explain.records import Explanation, Match, RootError
from compat.explain.roots import Raised
from compat.explain.stated import Change, StatedVersion
from compat.explain.verdict import Clue, ErrorVerdict
from compat.printable import one_line
from compat.timeline.records import ApiAnswer, ApiKind, Drift, Missing, OnDemandIndex, OnDemandOutcome

SCHEMA_VERSION = 1


def render_json(explanation: Explanation, *, top: int | None = None) -> str:
    matches = explanation.matches[:top] if top else explanation.matches
    doc = {
        "schema_version": SCHEMA_VERSION,
        "known": explanation.known,
        "lines_scanned": explanation.lines_scanned,
        "environment": explanation.environment,
        "matches": [_match_json(m) for m in matches],
        "verdict": explanation.verdict.value,
        "errors": [_error_json(e) for e in explanation.errors],
        "errors_dropped": explanation.errors_dropped,
        "engine": explanation.engine,
    }
    if explanation.on_demand:
        doc["api_index"] = [_on_demand_json(d) for d in explanation.on_demand]
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _on_demand_json(d: OnDemandIndex) -> dict:
    return {"package": d.package, "outcome": d.outcome.value, "releases": list(d.releases), "added": d.added,
            "requests": d.requests, "seconds": d.seconds, "reason": d.reason}


def on_demand_text(d: OnDemandIndex) -> str:
    """What explain did for a package the shipped API index lacks, in one line."""
    held = f"{len(d.releases)} release(s) ({d.releases[0]} - {d.releases[-1]})" if d.releases else "no release"
    if d.outcome is OnDemandOutcome.INDEXED:
        line = f"indexed {d.package} on demand: {d.added} release(s) read in {d.seconds:.1f} s; its index holds {held}"
    elif d.outcome is OnDemandOutcome.CACHED:
        line = f"{d.package}: answered from the cache of an earlier run, {held}"
        line += "" if d.reason else "; nothing read from the package index"
    else:
        line = f"{d.package}: not indexed"
    return f"{line} ({d.reason})" if d.reason else line


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


def _error_json(e: RootError) -> dict:
    return {
        "verdict": e.verdict.value,
        "reasons": list(e.reasons),
        "kind": e.kind.value,
        "first_line": e.first_line,
        "count": e.count,
        "wrapper": e.wrapper,
        "signatures": list(e.signatures),
        "chain": [_raised_json(r) for r in e.chain],
        "clues": [c.value for c in e.clues],
        "packages": [{"name": p.name, "version": p.version} for p in e.packages],
        "versions": [_version_json(v) for v in e.versions],
        "api": None if e.api is None else _api_json(e.api),
    }


def _api_json(a: ApiAnswer) -> dict:
    q = a.question
    return {
        "missing": q.missing.value, "name": q.name, "module": q.module, "package": a.package,
        "kind": a.kind.value if a.kind else None, "key": a.key,
        "present": [{"first": s.first, "last": s.last} for s in a.present], "drift": a.drift.value,
        "installed": a.installed, "removed_in": a.removed_in, "added_in": a.added_in,
        "caller": a.caller, "caller_installed": a.caller_installed,
        "caller_import": a.caller_import.value if a.caller_import else None, "caller_fixed_in": a.caller_fixed_in,
        "caller_since": a.caller_since,
        "fix": list(a.fix), "reason": a.reason, "typo_of": a.typo_of,
        "home_of": a.home_of, "elsewhere": a.elsewhere, "shadowed": a.shadowed,
    }


def _ranges(a: ApiAnswer) -> str:
    return ", ".join(s.first if s.first == s.last else f"{s.first} - {s.last}" for s in a.present)


def _api_sentence(a: ApiAnswer, what: str, yours: str | None) -> str:
    """Which side the timeline says is at fault, in one sentence."""
    if a.unreleased:
        return (f"api: no indexed {a.package} release has {what}, yet the installed {a.caller} asks for it: it was written "
                f"against an unreleased {a.package} (a development build or a fork); install a {a.caller} release made for "
                f"a released {a.package}")
    if a.drift is Drift.NEVER and a.typo_of:
        return f"api: no indexed {a.package} release has {what}; `{a.typo_of}` is one slip away: a typo, not the environment"
    if a.drift is Drift.NEVER and a.home_of:
        module, _, name = a.home_of.partition(":")
        return (f"api: no indexed {a.package} release has {what}, and {module} exports it: import it from there "
                f"(`from {module} import {name}`), not the environment")
    if a.drift is Drift.NEVER:
        return (f"api: no indexed {a.package} release has {what}, nor a name close to it: the calling code's own name, or "
                "one of an unreleased build")
    if a.drift is Drift.OVERRIDE:
        return (f"api: {a.package} {_ranges(a)} make this call on the object ({what.replace('a `', 'their own `', 1)}); the "
                f"override `{a.question.module}` refuses it: it was written for other {a.package} releases")
    if a.drift is Drift.INSTALLED_HAS and a.reason:
        return f"api: {a.reason}"
    if a.drift is Drift.INSTALLED_HAS:
        return f"api: {yours} has {what} (in {_ranges(a)}): the log comes from another environment"
    if a.drift is Drift.UNDECIDED:
        return f"api: the API index cannot decide {what}: {a.reason}"
    if a.drift is Drift.CALLEE_TOO_NEW and a.removed_in is None and a.kind is ApiKind.PARAM and a.question.missing is Missing.POSITIONAL:
        # a parameter the caller does not pass: the releases that added it are the ones its code predates
        added = a.added_in or a.present[0].first
        who = f"{yours} requires" if a.installed else f"{a.package} releases from {added} require"
        return f"api: {who} {what} (added in {added}; present in {_ranges(a)}): the calling code was written for releases before it"
    if a.drift is Drift.CALLEE_TOO_NEW:
        when = f"removed in {a.removed_in}" if a.removed_in else f"added in {a.added_in}"
        verb = "no longer has" if a.installed else "dropped"
        return f"api: {yours} {verb} {what} ({when}; present in {_ranges(a)})"
    if a.installed:
        return f"api: {yours} does not have {what} yet (added in {a.added_in or a.present[0].first}; present in {_ranges(a)})"
    if a.removed_in is None and len(a.present) > 1:
        return (f"api: {a.package} has {what} only in {_ranges(a)} (added in {a.added_in or a.present[0].first}, gone "
                f"between those runs of releases): the release that ran is outside them")
    if a.removed_in is None:
        added = a.added_in or a.present[0].first
        return f"api: {a.package} releases before {added} do not have {what} (added in {added}; present in {_ranges(a)})"
    # it came and went, and nothing says which side of that the installed release is
    return (f"api: {a.package} has {what} only in {_ranges(a)} (added in {a.added_in or a.present[0].first}, "
            f"removed in {a.removed_in}): the installed release is outside them")


def api_text(a: ApiAnswer) -> list[str]:
    """The API timeline's answer in words: which side is too old or too new, and the fix."""
    what = f"`{a.key}`"
    if a.kind is ApiKind.SIGNATURE and a.question.missing is Missing.POSITIONAL_COUNT:
        what = f"a `{a.key}` that takes {a.question.name} positional arguments"
    elif a.kind is ApiKind.SIGNATURE and a.question.missing is Missing.KEYWORD:
        what = f"a `{a.key}` that takes `{a.question.name}`"
    elif a.kind is ApiKind.SIGNATURE:
        what = f"a `{a.key}` that does not require `{a.question.name}`"
    yours = f"your {a.package} {a.installed}" if a.installed else a.package
    out = [_api_sentence(a, what, yours)]
    if a.elsewhere:
        out.append(f"     your {a.package} {a.elsewhere} does not fail this way: the log comes from another environment, and "
                   "the fix is for the one that ran it")
    if a.shadowed:
        out.append(f"     the log reports {a.package} {a.shadowed}, which has it: the {a.package} that ran is another release "
                   "(an older install ahead of it on the path, or a report taken in another environment); check which one "
                   "the failing interpreter imports (its `__version__` and `__file__`) and remove the other")
    if a.caller and a.caller_import is not None:
        who = f"your {a.caller} {a.caller_installed}" if a.caller_installed else a.caller
        out.append(f"     {who} imports it ({a.caller_import.value.replace('_', ' ')})")
    if a.fix:
        fixes = [f"install {a.fix[0]}"]
        for req in a.fix[1:]:
            why = ""
            if a.caller and req.startswith(f"{a.caller}>="):
                why = f" (the first {a.caller} release that stopped importing it)"
            elif a.caller and req.startswith(f"{a.caller}<") and a.kind is ApiKind.SIGNATURE:
                why = f" ({a.caller} releases from before it made this call)"
            elif a.caller and req.startswith(f"{a.caller}<"):
                why = f" ({a.caller} releases from before it started importing it)"
            fixes.append(f"{req}{why}")
        if a.drift is Drift.OVERRIDE:
            fixes.append(f"change the override to take the call (as {(a.key or '').partition(':')[2]} does)")
        out.append("     fix: " + ", or ".join(fixes))
    return out


def _raised_json(r: Raised) -> dict:
    return {
        "type": r.type,
        "message": r.message,
        "line": r.line,
        "frames": [{"file": f.file, "line": f.line, "function": f.function, "package": f.package} for f in r.frames],
    }


def _version_json(v: StatedVersion) -> dict:
    return {
        "subject": v.subject, "wanted": v.wanted, "found": v.found, "by": v.by, "change": v.change.value,
        "installed": v.installed, "satisfied": v.satisfied, "command": v.command, "phrasing": v.phrasing, "text": v.text,
    }


_VERDICT_WORDS = {
    ErrorVerdict.KNOWN: "a known environment failure",
    ErrorVerdict.KNOWN_USAGE: "a configuration mistake compat recognises, not the environment",
    ErrorVerdict.UNKNOWN_ENVIRONMENT: "an environment failure compat cannot name",
    ErrorVerdict.NOT_ENVIRONMENT: "not an environment failure compat recognises",
}
_CLUE_WORDS = {
    Clue.IMPORT: ("a module failed to import", "run `python -c 'import <module>'` in this environment to see the first error"),
    Clue.BINARY: ("a compiled extension or shared library does not load",
                  "reinstall the package named in the path from a wheel built for your torch, CUDA and glibc"),
    Clue.CUDA: ("a CUDA or driver error",
                "rerun with CUDA_LAUNCH_BLOCKING=1 to find the kernel; `compat doctor` checks the driver and the torch build"),
    Clue.NCCL: ("an NCCL or process-group error", "rerun with NCCL_DEBUG=INFO and read the first rank's error"),
    Clue.VERSION: ("the message states a version mismatch", "see the stated versions below"),
    Clue.API: ("a library API is not what its caller expects",
               "compare the versions of the packages in the frames with what the calling code was written for"),
    Clue.LIBRARY: ("raised inside an installed package's own code",
                   "compare the versions of the packages in the frames with the versions their callers support"),
    Clue.MISSING: ("the message says a package, library or backend the code needs is not installed (or too old for it "
                   "to be found)",
                   "install the package it names, in the release the failing package requires (`pip show` the failing "
                   "package for its requirements); `compat doctor` lists installed packages whose requirements are broken"),
    Clue.NATIVE: ("a compiled extension's C++ code failed (its standard library's exception, passed on as a Python error)",
                  "compare the release of the package whose frames raised it with the GPU, CUDA and torch it runs on; try the "
                  "release its dependants pin"),
    Clue.REGISTRY: ("an installed package does not know the model, class or backend it was asked for",
                    "find the release of that package which first supports it and upgrade; a class of the model's own "
                    "code needs trust_remote_code=True and its files beside the weights"),
}
_MAX_ERRORS_SHOWN = 10


def _headline(r: Raised) -> str:
    first = r.message.split("\n", 1)[0]
    text = f"{r.type}: {first}" if r.type and first else (r.type or first)
    return text[:300]


def _where(r: Raised) -> str:
    f = r.innermost
    if f is None:
        return ""
    place = f"{f.file}:{f.line}" if f.line is not None else f.file
    fn = f" in {f.function}" if f.function else ""
    owner = f"package {f.package}" if f.package else "your code"
    return f"raised at {place}{fn} ({owner})"


def _version_text(v: StatedVersion) -> str:
    have = f"; installed: {v.installed}" if v.installed else ""
    found = f", found {v.found}" if v.found else ""
    wanted = f"needs {v.subject}{v.wanted}" if v.wanted else f"{v.subject} is outside what it supports"
    by = f"{v.by} " if v.by else "it "
    change = _CHANGE_WORDS[v.change].format(subject=v.subject, wanted=v.wanted or "", by=v.by or "the binary that says so")
    if v.command:
        change += f": {v.command}"
    stale = " (the installed version already fits: the message is from another environment)" if v.satisfied else ""
    return f"{by}{wanted}{found}{have}: {change}{stale}"


_CHANGE_WORDS = {
    Change.INSTALLED: "change {subject} to satisfy {wanted}",
    Change.ARTEFACT: "reinstall {by} built for the {subject} you have",
    Change.HOST: "upgrade the host (driver) or install a build for the CUDA your driver runs",
    Change.TOOLKIT: "use a CUDA toolkit or compiler ({subject}) in that range to build it, or a prebuilt wheel",
    Change.GPU: "use a release or build that still supports this GPU, or a GPU that satisfies {wanted}",
}


def _errors_text(explanation: Explanation) -> list[str]:
    errors = explanation.errors
    if not errors:
        return []
    out = ["", "Errors in the log (each chain innermost cause first):"]
    for i, e in enumerate(errors[:_MAX_ERRORS_SHOWN], 1):
        tag = "wrapper" if e.wrapper else e.verdict.value
        times = f", x{e.count}" if e.count > 1 else ""
        out.append(f"{i}. [{tag}] {_headline(e.root)} (line {e.first_line}{times})")
        for r in e.chain[1:]:
            out.append(f"   then: {_headline(r)} (line {r.line})")
        where = _where(e.root)
        if where:
            out.append(f"   {where}")
        if e.signatures:
            out.append("   signatures: " + ", ".join(e.signatures))
        if e.api is not None:
            out.extend(f"   {line}" for line in api_text(e.api))
        if e.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and not e.wrapper:
            out.append("   about the environment: " + "; ".join([_CLUE_WORDS[c][0] for c in e.clues] or list(e.reasons)))
            if e.packages:
                out.append("   packages in the frames: " + ", ".join(f"{p.name} {p.version or '(version not known)'}" for p in e.packages))
            for c in e.clues:
                out.append(f"   next: {_CLUE_WORDS[c][1]}")
        if e.verdict is ErrorVerdict.NOT_ENVIRONMENT and e.reasons and not e.wrapper:
            out.append("   why: " + "; ".join(e.reasons))
        for v in e.versions:
            out.append(f"   stated versions: {_version_text(v)}")
    if len(errors) > _MAX_ERRORS_SHOWN:
        out.append(f"... and {len(errors) - _MAX_ERRORS_SHOWN} more error(s) (--json lists them all)")
    return out


def _on_demand_lines(explanation: Explanation) -> list[str]:
    if not explanation.on_demand:
        return []
    return ["", "API index on demand (packages the shipped index lacks):", *(f"  - {on_demand_text(d)}" for d in explanation.on_demand)]


def render_text(explanation: Explanation, *, top: int | None = None, width: int | None = None, color: bool = False) -> str:
    """The explanation for a reader; `width`: wrap to that many columns (None: one line per item, for
    pipes and grep); `color`: bold match headings and a coloured severity tag."""
    text = _render_text(explanation, top=top)
    if width is None and not color:
        return text
    return "".join(_styled(line, color) + "\n" for raw in text.splitlines() for line in _wrapped(raw, width))


# A match heading: "1. [error] Title".
_HEADING = re.compile(r"^(\d+\. )\[(error|warning|info|wrapper)\]( .*)$")
_TAG_COLOUR = {"error": "31", "warning": "33", "info": "36", "wrapper": "2"}
# Beyond this a line is a log line nobody reads in full: cut into pieces, not word-wrapped.
_WRAP_WORDS_UP_TO = 4096


def _wrapped(line: str, width: int | None) -> list[str]:
    if width is None or len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    room = max(width - len(indent), 10)
    if len(line) > _WRAP_WORDS_UP_TO:
        head, rest = line[:width], line[width:]
        return [head, *(indent + rest[i:i + room] for i in range(0, len(rest), room))]
    return textwrap.wrap(line, width=max(width, len(indent) + 10), subsequent_indent=indent, break_on_hyphens=False,
                         drop_whitespace=True) or [line]


def _styled(line: str, color: bool) -> str:
    if not color:
        return line
    m = _HEADING.match(line)
    if m is None:
        return line
    number, tag, title = m.groups()
    return f"{number}\x1b[{_TAG_COLOUR[tag]}m[{tag}]\x1b[0m\x1b[1m{title}\x1b[0m"


def _lines(items: list[str]) -> str:
    # Each item is one line: a line break inside an overlay's title or cause, or a log line, must not
    # start a line of its own (a forged `::error` in a CI log).
    return "".join(one_line(item) + "\n" for item in items)


def _render_text(explanation: Explanation, *, top: int | None = None) -> str:
    matches = explanation.matches[:top] if top else explanation.matches
    out: list[str] = []
    verdict = explanation.verdict
    failing = {id(m) for m in explanation.failures}
    roots = [m for m in matches if id(m) in failing]
    if not failing:
        notes = [m for m in matches if not m.signature.wrapper]
        answered = ""
        if explanation.known:
            by_api = any(e.api is not None and e.verdict is ErrorVerdict.KNOWN for e in explanation.errors)
            answered = " the API index names the cause below." if by_api else " the versions the log states name the cause below."
        out.append(f"No known signature in {explanation.lines_scanned} line(s) of log.{answered}" if not notes else
                   f"No known failure in {explanation.lines_scanned} line(s) of log; the catalog explains harmless lines:")
        for i, m in enumerate(notes, 1):
            out.extend(_match_lines(i, m))
        if notes:
            out.append("")
        wrappers = [m for m in matches if m.signature.wrapper]
        if wrappers:
            out.append("Only wrapper lines matched; the real error is earlier in the log or on another rank:")
            for m in wrappers:
                out.append(f"  - {m.signature.title} (line {m.lines[0].number})")
        if explanation.errors:
            out.append(f"Verdict: {_VERDICT_WORDS[verdict]} ({verdict.value}).")
            out.extend(_errors_text(explanation))
        elif not wrappers:
            out.append(f"Verdict: {verdict.value}: no error found in the log, so nothing says whether the environment is at "
                       "fault; `compat doctor` (or `compat smoke`) in the environment that failed checks it.")
        return _lines(out + _on_demand_lines(explanation))
    plural = "s" if len(roots) > 1 else ""
    out.append(
        f"Known failure{plural} in {explanation.lines_scanned} line(s) of log, most likely first ({explanation.environment}):"
    )
    for i, m in enumerate(matches, 1):
        out.extend(_match_lines(i, m))
    out.append("")
    out.append(f"Verdict: {_VERDICT_WORDS[verdict]} ({verdict.value}).")
    out.extend(_errors_text(explanation))
    return _lines(out + _on_demand_lines(explanation))


def _match_lines(i: int, m: Match) -> list[str]:
    sig = m.signature
    tag = "wrapper" if sig.wrapper else sig.severity.value
    out = ["", f"{i}. [{tag}] {sig.title}", f"   id: {sig.id}   score: {m.score}   matched lines: {m.occurrences}"]
    for ln in m.lines:
        times = f" (x{ln.count})" if ln.count > 1 else ""
        out.append(f"   line {ln.number}{times}: {ln.text}")
    if sig.wrapper:
        return out
    out.append(f"   cause: {sig.cause}")
    fix = []
    if sig.fix.requires:
        fix.append("install " + ", ".join(sig.fix.requires))
    if sig.fix.advice:
        fix.append(sig.fix.advice)
    out.append("   fix: " + ". ".join(fix))
    out.extend(f"   - {note}" for note in m.notes)
    out.append("   refs: " + ", ".join(sig.refs))
    return out


def render_markdown(explanation: Explanation, *, top: int | None = None, report_url: str | None = None) -> str:
    """A `<details>` block to paste into an issue: the verdict, then each match with its cause, log lines and fix."""
    from compat.report.markdown import escape, fence, ref

    verdict = explanation.verdict
    out = ["<details>",
           f"<summary><b>compat explain</b>: {escape(_VERDICT_WORDS[verdict])} ({verdict.value}) · "
           f"{explanation.lines_scanned} line(s) of log</summary>", ""]
    matches = explanation.matches[:top] if top else explanation.matches
    for i, m in enumerate(matches, 1):
        sig = m.signature
        tag = "wrapper" if sig.wrapper else sig.severity.value
        out += [f"#### {i}. [{tag}] {escape(sig.title)} · {ref(sig.id, report_url)}", ""]
        if not sig.wrapper:
            out.append(f"**Why:** {escape(sig.cause)}<br>")
            fix = ". ".join(p for p in ("install " + ", ".join(sig.fix.requires) if sig.fix.requires else "", sig.fix.advice) if p)
            out += [f"**Fix:** {escape(fix)}", ""] if fix else [""]
        out += fence("text", [f"line {ln.number}: {ln.text}" for ln in m.lines])
    roots = [e for e in explanation.errors if not e.wrapper][:_MAX_ERRORS_SHOWN]
    if roots:
        out.append("**Errors in the log:**")
        out += [f"- [{e.verdict.value}] {escape(_headline(e.root))} (line {e.first_line})" for e in roots]
        out.append("")
    if not explanation.errors and not matches:
        out += ["No error found in the log.", ""]
    out += [f"<sub>{escape(explanation.environment)}</sub>", "", "</details>"]
    return "\n".join(out) + "\n"


_LEVEL = {"error": "error", "warning": "warning", "info": "notice", "wrapper": "notice"}


def render_github(explanation: Explanation, *, top: int | None = None, report_url: str | None = None) -> str:
    """Workflow commands: one annotation per match (and per unnamed environment failure), then the verdict line."""
    from compat.report.ci import annotation
    from compat.report.links import finding_url

    lines = []
    matches = explanation.matches[:top] if top else explanation.matches
    for m in matches:
        sig = m.signature
        tag = "wrapper" if sig.wrapper else sig.severity.value
        url = finding_url(report_url, sig.id)
        fix = ". ".join(p for p in ("install " + ", ".join(sig.fix.requires) if sig.fix.requires else "", sig.fix.advice) if p)
        message = " ".join(p for p in (f"Log line {m.lines[0].number}." if m.lines else "", sig.cause,
                                       f"Fix: {fix}" if fix and not sig.wrapper else "", f"See {url}" if url else "") if p)
        lines.append(annotation(_LEVEL[tag], f"compat explain: {sig.title} [{sig.id}]", message))
    for e in explanation.errors:
        if e.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and not e.wrapper:
            clues = "; ".join(_CLUE_WORDS[c][0] for c in e.clues)
            lines.append(annotation("warning", "compat explain: an environment failure compat cannot name",
                                    f"Log line {e.first_line}: {_headline(e.root)}. {clues}"))
    verdict = explanation.verdict
    lines.append(f"compat explain: {_VERDICT_WORDS[verdict]} ({verdict.value}) in {explanation.lines_scanned} line(s) of log")
    return "\n".join(lines) + "\n"
