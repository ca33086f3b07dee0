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
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compat.errors import CompatError
from compat.explain.drift import questions
from compat.explain.fixes import tailor_fix
from compat.explain.normalize import ascii_quotes, clean, dedup_key, joined, stream, strip_ansi
from compat.explain.records import Explanation, Match, MatchedLine, RootError, failures
from compat.explain.roots import MAX_FOLLOWING, ErrorBuilder, ErrorDraft, ErrorKind, Event, Raised, echoes
from compat.explain.scan import LINE_CAP, MAX_LINE, BlobStore, Engine, HyperscanScanner, Scanner, make_scanner
from compat.explain.verdict import SERIOUSNESS, ErrorVerdict, PackageSeen, clues, decide, timeline_decides
from compat.explain.versions import check, stated_versions
from compat.judge.conditions import Outcome, evaluate
from compat.matrix.signatures import Signature
from compat.matrix.when import ScriptWhen, When
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource
from compat.timeline.overrides import answer_call
from compat.timeline.records import ApiAnswer

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.model.facts import Facts

MAX_LINES_PER_MATCH = 5
"""Distinct lines kept as evidence for one match (more ranks repeating it only add to a count)."""

MAX_SHOWN = 400
"""Characters of a matched line kept for display."""

# Score parts. Only the order they produce matters; see the module docstring.
_BASE = 1.0
_CONTEXT_FOUND = 0.5
_CONTEXT_MISSING = -0.4  # below a generic signature: without its frames the look-alike is the better guess
_GENERIC = -0.3
_ENV_MATCH = 0.5
_ENV_NO_MATCH = -0.5
_WRAPPER_FACTOR = 0.2


def overall_verdict(matches: tuple[Match, ...], errors: tuple[RootError, ...]) -> tuple[bool, ErrorVerdict]:
    """(known, verdict) of a whole log: known when a root cause was recognised (a configuration mistake the
    catalog names counts), else the most serious verdict of the root errors (of the wrappers when there are only
    those), `unknown-environment` when there are none."""
    named = list(failures(matches, errors))
    roots = [e for e in errors if not e.wrapper]
    # A catch-all speaks for the environment only where it decided an error; a specific entry may have overruled it.
    environment = [m for m in named if not m.signature.usage and (
        not m.signature.generic or any(m.signature.id in e.signatures and e.verdict is ErrorVerdict.KNOWN for e in errors))]
    if environment or any(e.verdict is ErrorVerdict.KNOWN for e in roots):
        return True, ErrorVerdict.KNOWN
    if named or any(e.verdict is ErrorVerdict.KNOWN_USAGE for e in roots):
        return True, ErrorVerdict.KNOWN_USAGE
    roots = roots or list(errors)
    # Calling a log not the environment's needs evidence (an error raised in the user's code, a data error); a log in
    # which no error is found gives none, so the environment stays a suspect.
    return False, next((v for v in SERIOUSNESS if any(e.verdict is v for e in roots)), ErrorVerdict.UNKNOWN_ENVIRONMENT)


@dataclass
class _Acc:
    first: int = 0
    occurrences: int = 0
    lines: dict[str, MatchedLine] = field(default_factory=dict)
    context: bool = False
    at: list[tuple[int, str]] = field(default_factory=list)
    """(line number, stream) of its hits, to attribute them to errors."""


EVENT_CAP = 20_000
"""Structural lines (frames, exception lines) of one kind read from a log; past that the errors
of the rest of the log are not split out (a bound on time and memory, not a limit any real log
reaches without repeating itself)."""

_EVENTS = tuple(Event)
_FOLLOW = frozenset({Event.EXCEPTION, Event.WHAT, Event.VERSION, Event.IMPORT})
_LAST_KEYS: list[tuple[tuple[Signature, ...], _Keys]] = []
"""The last catalog read and its keys: a process loads one catalog and may explain many logs with it."""


@dataclass(frozen=True)
class _Keys:
    """What each of the scanner's patterns stands for."""

    patterns: tuple[str, ...]
    owner: tuple[tuple[str, int], ...]
    """("pattern" | "context" | "frames", signature index) | ("event", Event index)."""


def _keys(signatures: tuple[Signature, ...]) -> _Keys:
    if _LAST_KEYS and _LAST_KEYS[0][0] is signatures:
        return _LAST_KEYS[0][1]
    patterns: list[str] = []
    owner: list[tuple[str, int]] = []
    for si, sig in enumerate(signatures):
        for p in sig.patterns:
            patterns.append(p)
            owner.append(("pattern", si))
        for c in sig.context:
            patterns.append(c)
            owner.append(("context", si))
        for f in sig.frame_patterns:
            patterns.append(f)
            owner.append(("frames", si))
    for ei, ev in enumerate(_EVENTS):
        patterns.append(ev.value)
        owner.append(("event", ei))
    keys = _Keys(patterns=tuple(patterns), owner=tuple(owner))
    _LAST_KEYS[:] = [(signatures, keys)]
    return keys


def _following(block: bytes, end: int, want: int) -> list[str]:
    """Up to `want` lines of `block` after offset `end` (the newline ending a hit's line)."""
    out: list[str] = []
    pos = end + 1 if end < len(block) else len(block)
    while len(out) < want and pos < len(block):
        nl = block.find(b"\n", pos)
        nl = len(block) if nl < 0 else nl
        out.append(strip_ansi(block[pos : min(nl, pos + MAX_SHOWN * 4)]).decode("utf-8", "replace"))
        pos = nl + 1
    return out


def _before(block: bytes, end: int) -> str:
    """The line above the one ending at offset `end` of `block`, past the carets Python 3.11 prints under a call
    ("" at the block's start: a block boundary loses it)."""
    start = block.rfind(b"\n", 0, end) + 1
    for _ in range(3):
        if start <= 0:
            return ""
        above = block.rfind(b"\n", 0, start - 1) + 1
        line = strip_ansi(block[above : min(start - 1, above + MAX_SHOWN * 4)]).decode("utf-8", "replace")
        if line.strip(" \t^~") or not line.strip():
            return line
        start = above
    return ""


@dataclass
class _Pending:
    """A structural line waiting for the lines after it (they may be in the next blocks)."""

    event: Event
    number: int
    text: str
    following: list[str]
    waiting: bool
    before: str = ""
    """An exception's line above it (a paste's call site, when no traceback is printed)."""


def explain(
    lines: Iterable[str | bytes],
    matrix: Matrix,
    facts: Facts | None = None,
    *,
    environment: str | None = None,
    engine: Engine | None = None,
    progress: Callable[[int], None] | None = None,
    store: BlobStore | None = None,
    api: ApiSource | None = None,
) -> Explanation:
    """Match a log against the catalog of `matrix` (anything with `.signatures`; its
    `.releases`, when present, tailors fixes), split it into root errors and rank the matches for
    `facts`. `progress`, when given, is called with the bytes read after each block; `store`
    keeps the compiled automaton between runs; `api` is the API timeline (default: that of the
    matrix's directories)."""
    read = read_log(lines, matrix, engine=engine, progress=progress, store=store)
    return rank(read, matrix, facts, environment=environment, api=api)


@dataclass
class ReadLog:
    """What one pass over a log found, before any environment is looked at."""

    signatures: tuple[Signature, ...]
    acc: dict[int, _Acc]
    drafts: list[ErrorDraft]
    lines_scanned: int
    engine: str
    errors_dropped: int
    reported: dict[str, str] = field(default_factory=dict)
    """Versions the log reports outside its errors (compat/explain/reported.py)."""


def read_log(
    lines: Iterable[str | bytes],
    matrix: Matrix,
    *,
    engine: Engine | None = None,
    progress: Callable[[int], None] | None = None,
    store: BlobStore | None = None,
) -> ReadLog:
    """The catalog's hits and the root errors of a log: the part of `explain` that needs no facts, so a caller can
    probe the environment while the log is read."""
    signatures: tuple[Signature, ...] = tuple(matrix.signatures)
    keys = _keys(signatures)
    scanner = _scanner(keys, engine, store)
    acc: dict[int, _Acc] = {}
    context_seen: set[int] = set()
    frames_seen: set[int] = set()
    # Budgets of lines per pattern: structural lines are worth more of them than catalog lines
    # (a log may repeat a warning's traceback many times before the one that matters).
    caps = [EVENT_CAP if kind == "event" else LINE_CAP for kind, _ in keys.owner]
    builder = ErrorBuilder()
    queue: deque[_Pending] = deque()
    line_base = 1
    for block in lines:
        if not block:
            continue
        data = ascii_quotes(scanner.prepare(block))
        for p in queue:
            if p.waiting:
                p.following += _following(b"\n" + data, 0, MAX_FOLLOWING - len(p.following))
                p.waiting = len(p.following) < MAX_FOLLOWING
        hits, block_lines = scanner.scan(data, line_base, caps, plain=True)
        for hit in hits:
            kind, index = keys.owner[hit.key]
            caps[hit.key] -= 1
            if kind == "event":
                event = _EVENTS[index]
                if event in _FOLLOW:
                    following = _following(data, hit.end, MAX_FOLLOWING)
                else:  # a frame's source line says what it was doing (an import, or a call into a library); IPython
                    # prints it as the third of its context lines (`---> 10 from x import y`)
                    following = _following(data, hit.end, 3) if event is Event.FRAME else []
                before = _before(data, hit.end) if event is Event.EXCEPTION else ""
                queue.append(_Pending(event, hit.line_number, hit.text, following, event in _FOLLOW and len(following) < MAX_FOLLOWING,
                                      before))
            elif kind == "context":
                context_seen.add(index)
            elif kind == "frames":
                frames_seen.add(index)
            else:
                _record(acc, index, hit.line_number, hit.text)
        while queue and not queue[0].waiting:
            p = queue.popleft()
            builder.feed(p.event, p.number, p.text, p.following, p.before)
        line_base += block_lines
        if progress is not None:
            progress(len(block))
    for p in queue:
        builder.feed(p.event, p.number, p.text, p.following, p.before)
    for si in context_seen & set(acc):
        acc[si].context = True
    drafts = builder.drafts()
    _match_wrapped(drafts, signatures, acc, context_seen, frames_seen, scanner, keys)
    scanner.release()
    for si in [si for si in acc if not _conditions_hold(signatures[si], acc[si], si in frames_seen, drafts)]:
        del acc[si]
    return ReadLog(signatures=signatures, acc=acc, drafts=drafts, lines_scanned=line_base - 1, engine=scanner.engine.value,
                   errors_dropped=builder.dropped, reported=builder.reported)


def rank(read: ReadLog, matrix: Matrix, facts: Facts | None = None, *, environment: str | None = None,
         api: ApiSource | None = None) -> Explanation:
    """The explanation of what `read_log` found, its matches ranked for `facts`."""
    signatures, acc, drafts = read.signatures, read.acc, read.drafts
    env_note = environment or ("environment facts given" if facts is not None else "no environment facts: ranked by the log alone")
    matches = [m for m in (_rank(signatures[si], a, facts, matrix) for si, a in acc.items()) if _evidenced(m)]
    # At an equal score an entry that asked for its library's frames and found them is the narrower guess, and so is,
    # on the same first line, one whose conditions name what it is about (vLLM's options) against one of any program.
    matches.sort(key=lambda m: (m.signature.wrapper, -m.score, not m.signature.frames, m.lines[0].number if m.lines else 0,
                                m.signature.when == When(), m.signature.id))
    by_id = {sig.id: si for si, sig in enumerate(signatures)}
    order = {m.signature.id: i for i, m in enumerate(matches)}
    source = api if api is not None else ApiSource(getattr(matrix, "roots", None))
    errors = _root_errors(drafts, [(by_id[m.signature.id], acc[by_id[m.signature.id]]) for m in matches], signatures, order, facts,
                          source, read.reported)
    listed = {sid for e in errors for sid in e.signatures}
    matches = [m for m in matches if not m.signature.generic or m.signature.id in listed]  # a catch-all that yielded everywhere
    known, verdict = overall_verdict(tuple(matches), errors)
    return Explanation(
        matches=tuple(matches), lines_scanned=read.lines_scanned, environment=env_note, errors=errors,
        engine=read.engine, errors_dropped=read.errors_dropped, known=known, verdict=verdict,
    )


def _evidenced(m: Match) -> bool:
    """Whether an entry that requires its context has it: in the log, or, for an entry about what the program runs (a
    `script` condition), in the environment, whose facts fit all its conditions: the bare two-device message is a
    launch mistake unless the installed trl and vLLM and the script's GRPO with vLLM are the ones the entry is about.
    A context that is the failure itself (a hang beside NCCL's P2P lines) only the log can show."""
    sig = m.signature
    return (not sig.context_required or bool(m.context_found)
            or (sig.when.script != ScriptWhen() and m.verdict is not None and m.verdict.outcome is Outcome.MATCH))


def _record(acc: dict[int, _Acc], si: int, number: int, text: str) -> None:
    a = acc.get(si)
    if a is None:
        a = acc[si] = _Acc(first=number)
    a.occurrences += 1
    if len(a.at) < LINE_CAP:
        a.at.append((number, stream(text)))
    key = dedup_key(text)
    seen = a.lines.get(key)
    if seen is not None:
        a.lines[key] = MatchedLine(number=seen.number, text=seen.text, count=seen.count + 1)
    elif len(a.lines) < MAX_LINES_PER_MATCH:
        a.lines[key] = MatchedLine(number=number, text=clean(text)[:MAX_SHOWN], count=1)


def _conditions_hold(sig: Signature, a: _Acc, frames_seen: bool, drafts: list[ErrorDraft]) -> bool:
    """Whether an entry whose pattern matched fires: the library it is about shows (`frames`), and a message any code
    raises about itself was raised in a package's code (`raised_in`). A required context is judged with the facts
    (`_evidenced`)."""
    if not _library_shown(sig, a, frames_seen):
        return False  # the message alone, raised where none of the library's code ran: user code's, not the library's
    if sig.raised_in == "not-user":
        return _not_raised_in_user_code(a, drafts)
    return not sig.raised_in or _raised_in_package(sig, a, drafts)


def _not_raised_in_user_code(a: _Acc, drafts: list[ErrorDraft]) -> bool:
    """Whether one of the exceptions it matched was not raised by the user's own code: raised in a package's frame,
    printed without a traceback (a one-line paste, a worker's summary), or an import error whose traceback was cut
    above the library frame that imported (`Raised.cut_above_import`), where nothing says the user's code did."""
    lines = {number for number, _ in a.at}
    placed = [raised for d in drafts for raised in d.chain if raised.line in lines]
    return not placed or any(r.raiser is None or r.raiser.package is not None or r.cut_above_import for r in placed)


def _raised_in_package(sig: Signature, a: _Acc, drafts: list[ErrorDraft]) -> bool:
    """Whether one of the lines it matched is an exception whose raising frame is an installed package's and, for an
    entry with `frames`, whose own traceback runs that library's code: a bare `NameError` raised in torch is unsloth's
    compiled code's only when unsloth_compiled_cache is on that exception's stack, not somewhere else in the log."""
    lines = {number for number, _ in a.at}
    shown = [re.compile(p, re.ASCII) for p in sig.frame_patterns]
    return any(raised.line in lines and raised.raiser is not None and raised.raiser.package is not None
               and (not shown or any(rx.search(f.file) for f in raised.frames for rx in shown))
               for d in drafts for raised in d.chain)


def _library_shown(sig: Signature, a: _Acc, frames_seen: bool) -> bool:
    """Whether the log shows a library of `sig.frames`: one of its frames anywhere, or its name in a matched line."""
    if not sig.frames or frames_seen:
        return True
    names = re.compile("|".join(rf"\b{name}\b" for name in sig.frames), re.IGNORECASE)
    return any(names.search(line.text) for line in a.lines.values())


def _match_wrapped(drafts: list[ErrorDraft], signatures: tuple[Signature, ...], acc: dict[int, _Acc], context_seen: set[int],
                   frames_seen: set[int], scanner: Scanner | HyperscanScanner, keys: _Keys) -> None:
    """A message wrapped over several lines matched nowhere line by line: try each error's
    message lines joined back (word wrap and terminal wrap)."""
    compiled: dict[int, list[re.Pattern[str]]] = {}
    for d in drafts:
        for raised in d.chain:
            parts = [p.strip() for p in raised.message.split("\n") if p.strip()]
            # A message printed without its type (shapes.py gave it one) is read once more with it.
            untyped = bool(parts) and bool(raised.type) and f"{raised.short_type}:" not in "\n".join(d.lines)
            if len(parts) < 2 and not untyped:
                continue
            head = f"{raised.type}: {parts[0]}" if raised.type else parts[0]
            candidates = [joined([head, *parts[1:k]]) for k in range(1 if untyped else 2, len(parts) + 1)]
            possible = _possible(scanner, keys, [t for texts in candidates for t in texts])
            for si, sig in enumerate(signatures):
                if si in acc and any(raised.line <= n <= raised.line + len(parts) for n, _ in acc[si].at):
                    continue
                if possible is not None and si not in possible and si not in acc:
                    continue  # none of its patterns matches any reading, and no other line of it needs its context
                rxs = compiled.get(si)
                if rxs is None:
                    rxs = compiled[si] = []
                    for c in sig.context:
                        if re.search(c, "\n".join(d.lines)):
                            context_seen.add(si)
                    if any(re.search(f, "\n".join(d.lines), re.ASCII) for f in sig.frame_patterns):
                        frames_seen.add(si)
                if possible is not None and si not in possible:
                    continue  # none of its patterns matches any reading: nothing to compile
                if not rxs:
                    rxs.extend(re.compile(p, re.ASCII) for p in sig.patterns)
                # The fewest lines that match: what follows the wrapped line is another message.
                texts = next((t for t in candidates if any(rx.search(x) for rx in rxs for x in t)), None)
                if texts is not None:
                    _record(acc, si, raised.line, texts[0])
                    acc[si].at[-1] = (raised.line, d.stream)
                    acc[si].context = si in context_seen


def _possible(scanner: Scanner | HyperscanScanner, keys: _Keys, texts: list[str]) -> set[int] | None:
    """The signatures with a pattern that matches one of `texts`, found by the log's own scanner (which compiles
    only the patterns its automaton or literals point at); None when the scanner would not read a text whole."""
    if any(len(t) * 4 >= MAX_LINE // 2 or "\x1b" in t for t in texts):
        # the scanner reads a window around each hit and removes colours: every pattern reads such a text itself
        return None
    # A budget no text can spend: a spent key would make the automaton build another database without it.
    caps = [max(LINE_CAP, len(texts) + 1)] * len(keys.owner)
    hits, _ = scanner.scan("\n".join(texts), 1, caps)
    return {keys.owner[hit.key][1] for hit in hits if keys.owner[hit.key][0] == "pattern"}


_SCANNERS: dict[tuple[tuple[str, ...], Engine | None], Scanner | HyperscanScanner] = {}


def _scanner(keys: _Keys, engine: Engine | None, store: BlobStore | None) -> Scanner | HyperscanScanner:
    # Compiling the automaton costs a fraction of a second; a long-lived process explaining many
    # logs against one catalog compiles it once.
    key = (keys.patterns, engine)
    scanner = _SCANNERS.get(key)
    if scanner is None:
        # A context or frame pattern only has to be seen once: it never needs a report per line.
        once = [k for k, (kind, _) in enumerate(keys.owner) if kind in ("context", "frames")]
        scanner = _SCANNERS[key] = make_scanner(keys.patterns, engine, once, store)
    return scanner


def _root_errors(
    drafts: list[ErrorDraft], ranked: list[tuple[int, _Acc]], signatures: tuple[Signature, ...], order: dict[str, int], facts: Facts | None,
    source: ApiSource | None = None, reported: dict[str, str] | None = None,
) -> tuple[RootError, ...]:
    """Drafts with the catalog's matches attributed to them; matched lines outside every error
    become errors of their own (one per signature, merged when they start on the same line)."""
    owned: dict[int, list[str]] = {}
    spans = sorted(((a, b, i, d.stream) for i, d in enumerate(drafts) for a, b in d.spans))
    starts = [s[0] for s in spans]
    extra: dict[int, ErrorDraft] = {}
    for si, a in ranked:
        sig = signatures[si]
        hit_any = False
        outside: tuple[int, str] | None = None
        for number, where in a.at:
            i = bisect_right(starts, number)
            owner = next((d for s, e, d, w in reversed(spans[max(0, i - 64) : i]) if s <= number <= e and w == where), None)
            if owner is None:
                owner = next((d for s, e, d, _ in reversed(spans[max(0, i - 64) : i]) if s <= number <= e), None)
            if owner is not None:
                ids = owned.setdefault(owner, [])
                if sig.id not in ids:
                    ids.append(sig.id)
                hit_any = True
            elif outside is None:
                outside = (number, where)
        if (outside is not None or not hit_any) and not sig.notice:
            number = outside[0] if outside else a.first
            first = min(a.lines.values(), key=lambda ln: ln.number) if a.lines else None
            d = extra.get(number)
            if d is None:
                text = first.text if first is not None else sig.title
                d = extra[number] = ErrorDraft(kind=ErrorKind.LINE, chain=[Raised(type="", message=text, frames=(), line=number)],
                                               first_line=number, spans=[(number, number)], stream=outside[1] if outside else "")
                d.count = first.count if first is not None else 1
            key = -(number + 1)
            owned.setdefault(key, [])
            if sig.id not in owned[key]:
                owned[key].append(sig.id)
    wrappers = {s.id for s in signatures if s.wrapper}
    usage = {s.id for s in signatures if s.usage}
    generic = {s.id for s in signatures if s.generic}
    out: list[RootError] = []
    for i, d in enumerate(drafts):
        out.append(_root_error(d, owned.get(i, []), wrappers, usage, order, facts, source, generic, reported))
    for number, d in extra.items():
        out.append(_root_error(d, owned.get(-(number + 1), []), wrappers, usage, order, facts, source, generic, reported))
    rank = {v: i for i, v in enumerate(SERIOUSNESS)}
    out.sort(key=lambda e: (e.wrapper, rank[e.verdict], e.first_line))
    return tuple(out)


def _root_error(
    d: ErrorDraft, ids: list[str], wrappers: set[str], usage: set[str], order: dict[str, int], facts: Facts | None,
    source: ApiSource | None = None, generic: frozenset[str] | set[str] = frozenset(), reported: dict[str, str] | None = None,
) -> RootError:
    ids = sorted(ids, key=lambda sid: (sid in wrappers, order.get(sid, 1 << 30)))
    chain = tuple(d.chain)
    text = "\n".join(f"{r.type}: {r.message}" if r.type else r.message for r in chain)
    versions = tuple(check(v, facts) for v in stated_versions(text))
    found = clues(d.kind, chain, versions)
    root_ids = [sid for sid in ids if sid not in wrappers]
    if any(sid not in generic for sid in root_ids):
        # A catch-all never overrules the specific entry that matched the same error: where a usage entry names
        # the mistake (training keys given to a command that does not train), the catch-all's environment reading goes.
        root_ids = [sid for sid in root_ids if sid not in generic]
    # What the error states outranks what the log reports elsewhere (an environment report, `pip freeze`).
    stated = {**(reported or {}), **{v.subject: v.found for v in versions if v.found}}
    drift = _api_answer(chain, facts, source, stated) if source is not None else None
    if drift is not None and timeline_decides(drift, chain) and root_ids and all(sid in generic for sid in root_ids):
        # A catch-all yields to the timeline when it decides: it names the release (or that no release ever had it).
        ids = [sid for sid in ids if sid not in generic]
        root_ids = []
    verdict, reasons = decide(chain, root_ids, usage, drift, versions, found)
    # An echo only when its innermost exception is one: a chain that starts from a real error is
    # that error, whatever wraps it.
    # An echo by its type or its wording (`roots.echoes`): a log that ends in one is decided by the errors above it.
    wrapper = not root_ids and (echoes(chain[0]) or (bool(ids) and len(chain) == 1))
    if wrapper:
        reasons = ("it only echoes an error reported elsewhere (a launcher's summary, another rank)",)
    return RootError(
        kind=d.kind, chain=chain, first_line=d.first_line, count=d.count, verdict=verdict, signatures=tuple(ids),
        wrapper=wrapper, clues=found, packages=_packages(chain, facts), versions=versions, api=drift, reasons=reasons,
    )


def _api_answer(chain: tuple[Raised, ...], facts: Facts | None, source: ApiSource, stated: dict[str, str]) -> ApiAnswer | None:
    """The first exception of the chain (innermost first) that the API timeline answers."""
    first: ApiAnswer | None = None
    for q in (q for raised in chain for q in questions(raised)):
        try:
            a = answer_call(q, facts, source, stated)
        except CompatError:
            continue  # a corrupt index answers nothing; `compat matrix validate` names it
        if a is not None and a.decided:
            return a
        first = first or a
    return first


def _packages(chain: tuple[Raised, ...], facts: Facts | None) -> tuple[PackageSeen, ...]:
    names: list[str] = []
    for raised in chain:
        for frame in reversed(raised.frames):
            if frame.package and frame.package not in names:
                names.append(frame.package)
    out = []
    for name in names:
        version = None
        if facts is not None:
            dist = facts.package(name)
            if dist is not None and not isinstance(dist, Unknown):
                version = dist.version
        out.append(PackageSeen(name=name, version=version))
    return tuple(out)


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

