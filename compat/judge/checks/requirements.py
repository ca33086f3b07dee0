"""Declared requirements of the installed distributions that are not satisfied (what `pip check` finds).

The matrix adds what installed metadata cannot say: which other releases of the dependent
package would accept the version that is installed ("keep torch 2.6.0, use vllm 0.8.x").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.judge.checks._util import cannot_check, found
from compat.judge.conditions import in_spec, marker_holds
from compat.matrix import Matrix
from compat.model.facts import Distribution, Facts
from compat.model.findings import Finding
from compat.model.unknown import Unknown

WRONG_VERSION = "unsatisfied-requirement"
MISSING = "missing-requirement"

OWNS = {
    WRONG_VERSION: frozenset({"dist", "project", "wanted", "dep"}),
    MISSING: frozenset({"dist", "project", "wanted", "name"}),
}
"""The catalog entries this check speaks through, and the `{fields}` it fills in each."""


def check_requirements(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if isinstance(facts.packages, Unknown):
        yield cannot_check(matrix, WRONG_VERSION, facts.packages)
        return
    env = dict(facts.python.markers)
    installed = {d.name: d for d in facts.packages}
    undecided: dict[str, list[str]] = {}  # catalog id -> why each unmet requirement may not apply
    for dist in facts.packages:
        for text in dist.requires:
            if _only_for_an_extra(text):
                continue
            req = _parse(text)
            if req is None:
                continue
            applies = True if req.marker is None else marker_holds(req.marker, env)
            if applies is False:
                continue
            dep = installed.get(str(canonicalize_name(req.name)))
            if dep is not None and (not str(req.specifier) or in_spec(dep.version, req.specifier)):
                continue
            if isinstance(applies, Unknown):
                # Unmet, but whether it applies depends on a marker key the facts lack: never guessed from this host.
                fid = MISSING if dep is None else WRONG_VERSION
                undecided.setdefault(fid, []).append(f"{dist.name} {dist.version} requires {req}: {applies.reason}")
                continue
            yield _finding(dist, req, dep, matrix, env)
    for fid, reasons in sorted(undecided.items()):
        yield cannot_check(matrix, fid, "; ".join(reasons))


_EXTRA = re.compile(r"""\bextra\s*==\s*['"]""")


def _only_for_an_extra(text: str) -> bool:
    """`...; extra == "x"` (joined by `and` only) never applies when no extra is asked for.

    Most Requires-Dist lines are of this kind and parsing them costs more than the rest of
    the check, so they are recognised without a full parse; anything less plain is parsed.
    """
    _, sep, marker = text.partition(";")
    return bool(sep) and _EXTRA.search(marker) is not None and " or " not in marker and "!=" not in marker


def _parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None  # a malformed line in someone's metadata is pip's problem, not a finding


def _finding(dist: Distribution, req: Requirement, dep: Distribution | None, matrix: Matrix, env: dict[str, str]) -> Finding:
    wanted = f"{req.name}{req.specifier}"
    values = {"dist": f"{dist.name} {dist.version}", "project": dist.name, "wanted": wanted}
    declares = f"{dist.name} {dist.version} declares {wanted}"
    # The release's own metadata is the source of this requirement.
    source = (f"pypi:{dist.name}=={dist.version.split('+')[0]}",)
    if dep is None:
        return found(matrix, MISSING, values={**values, "name": req.name}, requires=(wanted,), refs=source,
                     evidence=(declares, f"{req.name} is not installed"))
    evidence = [declares, f"{dep.name} {dep.version} is installed"]
    alternatives = compatible_releases(matrix, dist.name, dep.name, dep.version, env)
    if alternatives:
        evidence.append(f"{dist.name} {alternatives} accept {dep.name} {dep.version}")
    return found(matrix, WRONG_VERSION, values={**values, "dep": f"{dep.name} {dep.version}"},
                 requires=(wanted,), refs=source, evidence=tuple(evidence))


def compatible_releases(matrix: Matrix, dependent: str, dep: str, dep_version: str, env: dict[str, str]) -> str:
    """The newest run of consecutive releases of `dependent` that accept `dep_version`: "a … b" or ""."""
    package = matrix.releases.get(dependent)
    if package is None:
        return ""
    dep_key = canonicalize_name(dep)
    runs: list[list[str]] = [[]]
    for release in package.releases:
        if release.yanked or release.requires is None:
            continue
        if release.requires_python is not None and not in_spec(env.get("python_full_version", "3.11"), release.requires_python):
            continue
        reqs = [
            r for r in release.requires
            if canonicalize_name(r.name) == dep_key
            and (r.marker is None or marker_holds(r.marker, env) is not False)  # unknown: assume it applies
        ]
        if reqs and all(in_spec(dep_version, r.specifier) for r in reqs):
            runs[-1].append(str(release.version))
        elif runs[-1]:
            runs.append([])
    fits = next((run for run in reversed(runs) if run), [])
    if not fits:
        return ""
    return fits[0] if len(fits) == 1 else f"{fits[0]} … {fits[-1]} ({len(fits)} releases)"
