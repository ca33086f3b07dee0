"""The records explain returns: each matched signature, each root error, and the whole log's answer.

`compat.explain.match` fills them (and decides the verdicts); the renderers in compat/report read
them and import nothing that decides, which is why they live apart from the matcher.
"""

from __future__ import annotations

from dataclasses import dataclass

from compat.explain.roots import ErrorKind, Raised
from compat.explain.stated import StatedVersion
from compat.explain.verdict import Clue, ErrorVerdict, PackageSeen
from compat.matrix.signatures import Signature
from compat.model.conditions import Verdict
from compat.timeline.records import ApiAnswer, OnDemandIndex


@dataclass(frozen=True, kw_only=True)
class MatchedLine:
    number: int
    """1-based line number of the first occurrence."""
    text: str
    """The line without colours and rank/process/time prefixes, cut to `match.MAX_SHOWN` characters."""
    count: int = 1
    """How many lines in the log are this line (the same message from several ranks)."""


@dataclass(frozen=True, kw_only=True)
class Match:
    signature: Signature
    """The known failure."""
    score: float
    """Higher is more likely the cause; comparable within one explanation only."""
    lines: tuple[MatchedLine, ...]
    """Evidence from the log, deduplicated across ranks, at most `match.MAX_LINES_PER_MATCH`."""
    occurrences: int
    """Every matching line, repeats included."""
    context_found: bool | None
    """Whether a distinguishing frame was in the log; None when the signature has none."""
    verdict: Verdict | None
    """How the environment fits the signature's conditions; None without facts."""
    notes: tuple[str, ...] = ()
    """The fix tailored to the environment ("you have vllm 0.7.1; the fix needs vllm==0.7.2")."""


@dataclass(frozen=True, kw_only=True)
class RootError:
    kind: ErrorKind
    """Where it comes from: a Python exception, a C++ exception, an NCCL report, a stray line."""
    chain: tuple[Raised, ...]
    """The exceptions of one chain, innermost (the first raised, the cause) first."""
    first_line: int
    """Line number where it starts (its traceback's header)."""
    count: int
    """How many times the log shows it (ranks, retries)."""
    verdict: ErrorVerdict
    """Known, an environment failure compat cannot name, or not an environment failure."""
    signatures: tuple[str, ...]
    """Ids of the catalog entries that matched it, best first (wrappers last)."""
    wrapper: bool
    """Only echoes an error printed elsewhere (a launcher's summary, an engine's 'see above')."""
    clues: tuple[Clue, ...]
    """Why it is about the environment, when no signature names it."""
    packages: tuple[PackageSeen, ...]
    """Packages whose files raised it (frames, innermost first) and their installed versions."""
    versions: tuple[StatedVersion, ...]
    """Version mismatches its messages state, checked against the facts."""
    api: ApiAnswer | None = None
    """What the API timeline says about a missing import, attribute, argument, subcommand or model
    type in its chain (innermost first); None when it names none or no indexed package is the callee."""
    reasons: tuple[str, ...] = ()
    """The evidence the verdict rests on ("the catalog's X matched it", "raised in your own code (train.py:12)")."""

    @property
    def root(self) -> Raised:
        """The innermost exception: the cause."""
        return self.chain[0]


@dataclass(frozen=True, kw_only=True)
class Explanation:
    matches: tuple[Match, ...]
    """Best first: root causes by score, then wrapper lines."""
    lines_scanned: int
    """Lines read from the log."""
    environment: str
    """What the environment ranking was based on, or why there was none."""
    errors: tuple[RootError, ...] = ()
    """Every distinct error the log reports: root errors first (known, then unknown-environment,
    then not-environment, each in log order), wrappers last."""
    engine: str = ""
    """The scanning engine used ("hyperscan" or "python")."""
    errors_dropped: int = 0
    """Errors beyond the `roots.MAX_ERRORS` kept (a log of thousands of distinct exceptions)."""
    known: bool = False
    """A root cause was recognised, by a signature or the API timeline (wrapper lines alone do not count)."""
    verdict: ErrorVerdict = ErrorVerdict.NOT_ENVIRONMENT
    """The answer for the whole log, decided by `rank` (`overall_verdict`): renderers and the exit code read it."""
    on_demand: tuple[OnDemandIndex, ...] = ()
    """The packages the log asks the API timeline about that the shipped index lacks, and what explain did
    for each (indexed on demand, answered from the cache, or why not); empty when it asks about none."""

    @property
    def failures(self) -> tuple[Match, ...]:
        """The matches that name a failure (wrappers and notes beside the log left out)."""
        return failures(self.matches, self.errors)


def failures(matches: tuple[Match, ...], errors: tuple[RootError, ...]) -> tuple[Match, ...]:
    """The matches that name a failure: not wrappers, and a harmless notice (severity info) only where it is an
    error's own line. Beside a run that worked (gradient checkpointing turning the cache off) a notice is a note,
    not "a known environment failure"."""
    decided = {sid for e in errors for sid in e.signatures}
    return tuple(m for m in matches if not m.signature.wrapper and (not m.signature.notice or m.signature.id in decided))
