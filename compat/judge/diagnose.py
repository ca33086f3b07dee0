"""Facts × Matrix → findings: the built-in checks, then the catalog's exposure rules."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.requirements import Requirement

from compat.judge import checks
from compat.judge.checks.import_links import check_import_links
from compat.judge.conditions import Outcome, evaluate
from compat.matrix import Matrix
from compat.matrix.signatures import Signature
from compat.matrix.when import When
from compat.model.facts import Facts, canonical
from compat.model.findings import Consequence, Evidence, EvidenceKind, Finding, Severity, Status, sort_findings
from compat.timeline.links import ApiSource


def diagnose(facts: Facts, matrix: Matrix, *, api: ApiSource | None = None, feature_links: bool = False) -> tuple[Finding, ...]:
    """`api` reads the API timeline for the import-link check (default: the matrix's index alone); `feature_links`
    also reports the imports that break only a feature (info)."""
    found: list[Finding] = []
    for check in checks.ALL:
        found.extend(check(facts, matrix))
    found.extend(check_import_links(facts, matrix, api, feature_links=feature_links))
    missing = _missing_names(found)
    found.extend(catalog_findings(facts, matrix, reported_missing=missing))
    return sort_findings(found)


def _missing_names(findings: list[Finding]) -> frozenset[str]:
    """Packages the grouped missing-dependency finding already asks to install."""
    names: set[str] = set()
    for f in findings:
        if f.id == checks.requirements.MISSING and f.status is Status.FOUND:
            names.update(canonical(Requirement(r).name) for r in f.fix.requires)
    return frozenset(names)


def catalog_findings(facts: Facts, matrix: Matrix, *, reported_missing: frozenset[str] = frozenset()) -> Iterator[Finding]:
    """Known failures this environment is exposed to, and those it may be exposed to.

    An entry about an absent package that the missing-dependency finding already names is left
    out: one finding per problem, and that one has the install command.
    """
    for sig in matrix.signatures:
        if not decided_by_when(sig):
            continue
        if sig.when.absent and set(sig.when.absent) <= reported_missing:
            continue
        verdict = evaluate(sig.when, facts)
        if verdict.outcome is Outcome.NO_MATCH:
            continue
        if verdict.outcome is Outcome.UNKNOWN and not verdict.evidence:
            continue  # nothing points at this environment; "cannot check" would only be noise
        yield Finding(
            id=sig.id,
            severity=sig.severity,
            status=Status.FOUND if verdict.matched else Status.CANNOT_CHECK,
            title=sig.title,
            cause=sig.cause,
            fix=sig.fix,
            evidence=tuple(Evidence(kind=EvidenceKind.MATCHED, text=text) for text in verdict.evidence),
            unknown=verdict.missing,
            refs=sig.refs,
            consequence=sig.consequence or Consequence.of_severity(sig.severity),
        )


def decided_by_when(sig: Signature) -> bool:
    """Whether doctor decides the entry from its `when` clause alone: `doctor = false` marks conditions too broad to
    warn about, an empty clause would warn everywhere, and an entry a built-in check owns is decided by that check,
    which knows more than the clause states (the GPU table, torch's architecture list)."""
    return sig.doctor and sig.when != When() and sig.id not in checks.OWNED_IDS


def vetoes(sig: Signature, *, risks: bool = True) -> bool:
    """Whether a catalog entry keeps a lock off a set: what doctor reports as an error does, and with `risks` what it
    reports as a warning (only where a way out resolves: with none, the set stays and the lock notes the risk).
    A plan passes risks=False: moving trl a major release to clear a risk moves far more than the problem asks."""
    return sig.doctor and (sig.severity is Severity.ERROR or (risks and sig.severity is Severity.WARNING))


def fails(findings: tuple[Finding, ...], threshold: Severity, *, strict: bool = False) -> bool:
    """Whether doctor should exit 1: a finding at or above `threshold` (with --strict, an undecided one too)."""
    return any(
        f.severity.rank >= threshold.rank and (f.status is Status.FOUND or strict)
        for f in findings
    )
