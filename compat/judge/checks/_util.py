"""Small helpers shared by the checks, and the one way a check turns its decision into a finding.

A built-in check only decides: the words (title, cause, fix, refs) belong to its catalog entry,
whose text may name `{fields}` that the check fills with the facts it decided on.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from compat.matrix import Matrix, Signature
from compat.matrix.torch import sm
from compat.model.facts import Facts, Gpu
from compat.model.findings import Consequence, Evidence, Finding, Fix, Severity, Status, observed
from compat.model.unknown import Unknown


def entry(matrix: Matrix, fid: str) -> Signature:
    """The catalog entry that holds the words of built-in check `fid` (a missing one is a bug: the tests name every id)."""
    sig = matrix.signature(fid)
    if sig is None:
        raise LookupError(f"built-in check {fid!r} has no catalog entry in matrix/signatures/")
    return sig


def found(
    matrix: Matrix,
    fid: str,
    *,
    evidence: tuple[Evidence, ...],
    values: Mapping[str, object] | None = None,
    requires: tuple[str, ...] = (),
    commands: tuple[str, ...] = (),
    severity: Severity | None = None,
    refs: tuple[str, ...] = (),
    consequence: Consequence | None = None,
    see: tuple[str, ...] = (),
) -> Finding:
    """A FOUND finding in the words of catalog entry `fid`, its `{fields}` filled from `values`.

    `refs` adds sources that only this environment names (the metadata of the installed release)
    after the entry's own. `consequence` overrides the entry's when this environment's facts say
    more (a pin that breaks a compiled extension); `see` names the catalog entries it leads to.
    """
    sig = entry(matrix, fid)
    fill = {k: str(v) for k, v in (values or {}).items()}
    return Finding(
        id=sig.id,
        severity=severity or sig.severity,
        status=Status.FOUND,
        title=sig.title.format_map(fill),
        cause=sig.cause.format_map(fill),
        fix=Fix(
            requires=requires or sig.fix.requires,
            advice=sig.fix.advice.format_map(fill),
            commands=commands,
        ),
        evidence=evidence,
        refs=sig.refs + tuple(r for r in refs if r not in sig.refs),
        consequence=consequence or sig.consequence or Consequence.of_severity(severity or sig.severity),
        see=see,
    )


def cannot_check(matrix: Matrix, fid: str, why: str | Unknown) -> Finding:
    """A CANNOT_CHECK finding for catalog entry `fid`: a fact it needs is unknown."""
    sig = entry(matrix, fid)
    reason = why.reason if isinstance(why, Unknown) else why
    return Finding(
        id=sig.id,
        severity=sig.severity,
        status=Status.CANNOT_CHECK,
        title=_generic(sig.title),
        cause="",
        fix=Fix(),
        unknown=(reason,),
        refs=sig.refs,
        consequence=sig.consequence or Consequence.of_severity(sig.severity),
    )


def fields(text: str) -> frozenset[str]:
    """The `{field}` names in a catalog text (`{{` and `}}` are literal braces)."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(text) if name)


def _generic(title: str) -> str:
    """A title with each `{field}` shown as `…`, for a check that could not run: it decided on no facts."""
    return "".join(lit + ("…" if name else "") for lit, name, _, _ in string.Formatter().parse(title)).strip()


def declared_note(facts: Facts, name: str) -> str:
    return " (declared)" if name in facts.declared else ""


def about(facts: Facts, name: str, text: str) -> Evidence:
    """Evidence about fact `name` ("gpus", "driver", "launcher"): DECLARED, and noted so in its text, when it was
    given on the command line rather than read from the host."""
    return observed(text + declared_note(facts, name), declared=name in facts.declared)


def gpu_label(gpu: Gpu) -> str:
    cc = gpu.compute_capability
    return f"{gpu.name} ({sm(cc) if isinstance(cc, str) else 'sm_?'})"


def distinct_gpus(gpus: tuple[Gpu, ...]) -> tuple[Gpu, ...]:
    """One GPU per model: findings about a model should not repeat for each of its eight boards."""
    seen: dict[tuple[str, str], Gpu] = {}
    for gpu in gpus:
        seen.setdefault((gpu.name, str(gpu.compute_capability)), gpu)
    return tuple(seen.values())
