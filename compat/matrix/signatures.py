"""Known failures: the catalog under matrix/signatures/*.toml.

Loading validates the shape of every entry, that each regex compiles, and that it uses nothing an
automaton cannot run (back-references, lookaround, ...): the patterns are then linear-time by
construction on the Hyperscan engine, and `compat matrix validate` needs no timing audit. Patterns
on which Python's `re` (the pure-Python engine, and every confirming search) backtracks
exponentially, a repeat inside an unbounded repeat (`(a+)+`) or alike alternatives inside one
(`(a|aa)+`), are refused too.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compat.matrix._toml import Table, read_toml
from compat.matrix.when import When, parse_when
from compat.model.findings import Consequence, Fix, Severity

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Recognition(str, enum.Enum):
    """What kind of failure an entry recognises, where a check must find entries by kind rather than by id."""

    ABI_UNDEFINED_SYMBOL = "abi-undefined-symbol"
    """A compiled package's `undefined symbol` at import: it was built against another torch (or C++ ABI)."""


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
    consequence: Consequence | None = None
    """What the failure does to the program (`consequence = "wont-start"`); None: what the severity implies."""
    generic: bool = False
    """True for a catch-all message (plain CUDA OOM, NCCL timeout) that a more specific signature
    on the same log should outrank."""
    context_required: bool = False
    """True when a line of the log must match one of `context` for the signature to fire at all
    (NCCL P2P INFO lines only mean a hang when the log also shows one); for an entry with a `script` condition, facts
    that fit all its conditions stand in for it (compat/explain/match.py `_evidenced`)."""
    usage: bool = False
    """True for a mistake in the user's configuration, data or code (no chat template, a prompt longer
    than max_model_len, batch arithmetic): explain's verdict is `known-usage`, not an environment failure."""
    recognises: tuple[Recognition, ...] = ()
    """The kinds of failure it recognises (`recognises = ["abi-undefined-symbol"]`): how checks find it."""
    frames: tuple[str, ...] = ()
    """Import names of the libraries whose failure it is (`frames = ["trl"]`): it fires only when the log shows a
    frame or module path of one of them, or the matched line names one. A message user code could raise too
    (`'DataParallel' object has no attribute 'config'`) is then not taken for the library's failure."""

    raised_in: str = ""
    """"package" for a message any code could raise about itself (`No module named 'x'`, `module 'x' has no
    attribute 'y'`): the entry fires only on an exception whose raising frame is an installed package's (or a
    framework's source checkout), where it names the environment; raised by the user's own code it does not fire.
    With `frames` too, that exception's own traceback must run one of those libraries' code. "not-user" asks less:
    the entry fires unless the user's own code raised it, so an exception printed without its traceback counts (for
    a message whose own words already say a library's internals are involved, a private name)."""
    few_lines: str = ""
    """Why its saved log holds fewer than three real lines (the one public thread that shows the message, a line
    printed once per run); empty where three are saved."""

    @property
    def notice(self) -> bool:
        """A harmless line it explains (severity info, not a wrapper): a note beside a log, never an error of its own."""
        return self.severity is Severity.INFO and not self.wrapper

    @property
    def frame_patterns(self) -> tuple[str, ...]:
        """Regexes of a frame or module path of each library in `frames` (`/trl/`, `trl.trainer`)."""
        return tuple(frame_pattern(name) for name in self.frames)

    def recognises_for(self, kind: Recognition, package: str) -> bool:
        """Whether it recognises `kind` of failure of `package` (one its `when` names)."""
        return kind in self.recognises and package in dict(self.when.packages)


_IMPORT_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def frame_pattern(name: str) -> str:
    """A path segment or dotted module of the import name `name`: a traceback frame, a logger's name, an import."""
    return rf"(?:[/\\]|\b){name}(?:[/\\]|\.[A-Za-z_])"


_REF = re.compile(r"^([\w.-]+/[\w.-]+(#\d+|@[\w.-]+)|https?://\S+|pypi:[\w.-]+(==[\w.+-]+)?)$")
_KEYS = (
    "id", "title", "severity", "patterns", "when", "cause", "fix", "refs", "wrapper", "doctor",
    "context", "generic", "consequence", "context_required", "recognises", "usage", "frames",
    "few_lines", "raised_in",
)


def _regexes(t: Table, key: str, *, required: bool) -> tuple[str, ...]:
    # Imported where a file is parsed: a compiled matrix is read back without the pattern parser.
    from compat.matrix.pattern_syntax import backtracking_problems, engine_problems

    patterns = t.strs(key) if required else t.strs(key, ())
    for i, pattern in enumerate(patterns):
        try:
            # Compiled as the scanner compiles it, so the scanner finds it in `re`'s cache.
            re.compile(pattern, re.ASCII)
        except re.error as exc:
            t.fail(f"{key}[{i}]", f"does not compile: {exc}")
        problems = engine_problems(pattern)
        if problems:
            t.fail(f"{key}[{i}]", f"uses {', '.join(problems)}, which the automaton engine cannot run; rewrite it without")
        risky = backtracking_problems(pattern)
        if risky:
            t.fail(f"{key}[{i}]", f"has {', '.join(risky)}: Python's re backtracks on it for exponential time; rewrite it "
                                  "with one repeat per stretch of text")
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
    patterns = _regexes(t, "patterns", required=True)
    for i, pattern in enumerate(patterns):
        if re.compile(pattern, re.ASCII).search(""):
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
    consequence_text = t.str("consequence", None)
    consequence = None
    if consequence_text is not None:
        try:
            consequence = Consequence(consequence_text)
        except ValueError:
            t.fail("consequence", f"{consequence_text!r} is not one of {', '.join(c.value for c in Consequence)}")
    doctor = t.bool("doctor", True)
    if doctor and when == When():
        t.fail("doctor", "a signature with an empty `when` would warn on every environment; set doctor = false")
    context = _regexes(t, "context", required=False)
    context_required = t.bool("context_required", False)
    if context_required and not context:
        t.fail("context_required", "needs `context` patterns to require")
    recognises = _recognitions(t, when)
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
        context=context,
        generic=t.bool("generic", False),
        consequence=consequence,
        context_required=context_required,
        usage=t.bool("usage", False),
        recognises=recognises,
        frames=_frames(t, patterns),
        few_lines=_few_lines(t, patterns),
        raised_in=_raised_in(t, patterns),
    )


def _frames(t: Table, patterns: tuple[str, ...]) -> tuple[str, ...]:
    frames = t.strs("frames", ())
    for i, name in enumerate(frames):
        if not _IMPORT_NAME.match(name):
            t.fail(f"frames[{i}]", f"{name!r} is not an import name (lowercase, as in `import {name.lower().replace('-', '_')}`)")
    if frames and not patterns:
        t.fail("frames", "needs `patterns`: it says which log lines are the library's")
    return frames


RAISED_IN = ("package", "not-user")
"""The places `raised_in` may name: an installed package's frame, or anywhere but the user's own code (a package's
frame, or an exception printed without its traceback)."""


def _raised_in(t: Table, patterns: tuple[str, ...]) -> str:
    place = t.str("raised_in", None) or ""
    if place and place not in RAISED_IN:
        t.fail("raised_in", f"{place!r} is not one of {', '.join(RAISED_IN)}")
    if place and not patterns:
        t.fail("raised_in", "needs `patterns`: it says which exception lines must be raised there")
    return place


def _few_lines(t: Table, patterns: tuple[str, ...]) -> str:
    reason = t.str("few_lines", None) or ""
    if reason and not patterns:
        t.fail("few_lines", "an entry without patterns has no log lines to count")
    return reason


def _recognitions(t: Table, when: When) -> tuple[Recognition, ...]:
    out: list[Recognition] = []
    for i, text in enumerate(t.strs("recognises", ())):
        try:
            kind = Recognition(text)
        except ValueError:
            t.fail(f"recognises[{i}]", f"{text!r} is not one of {', '.join(r.value for r in Recognition)}")
        if kind in out:
            t.fail(f"recognises[{i}]", f"{text!r} is listed twice")
        if kind is Recognition.ABI_UNDEFINED_SYMBOL and not when.packages:
            t.fail(f"recognises[{i}]", "an ABI failure is a compiled package's: name it in `when.packages`")
        out.append(kind)
    return tuple(out)


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
