"""Links of the installed set: every import one installed tracked package makes from another must
resolve in the installed release of the other. The API timeline answers which links break
(compat/timeline/links.py, `installed_set_links`); this check only words them.

A top-level unguarded import of a name the installed provider no longer has breaks importing the
package: an error. A guarded or lazy one, or one in a module that loads on demand (one model's
module: `BrokenLink.on_demand`), breaks only the feature behind it: a warning. A name that only
newer provider releases have is no finding (`BrokenLink.added_later`): code reaching for a newer
provider's API is how a package supports a range, and whether it supports this provider at all is
what its declared requirements say, which the requirements check judges.
Pairs the index cannot read decide nothing (the installed source files answer for them where doctor
could read them: compat/sources/installed_api.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from compat.judge.checks._util import found
from compat.matrix import Matrix
from compat.model.facts import Facts
from compat.model.findings import Finding, curated
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource, installed_set_links
from compat.timeline.records import BrokenLink, ImportKind

BROKEN = "api-import-link-broken"
GUARDED = "api-import-link-guarded"

_FIELDS = frozenset({"importer", "importer_version", "provider", "provider_version", "module", "imported", "present", "how"})
OWNS = {BROKEN: _FIELDS, GUARDED: _FIELDS}
"""The catalog entries this check speaks through, and the `{fields}` it fills in each."""

_HOW = {ImportKind.TOP_LEVEL: "at import time", ImportKind.GUARDED: "behind an availability check", ImportKind.LAZY: "inside a function"}


def check_import_links(facts: Facts, matrix: Matrix, source: ApiSource | None = None, *,
                       feature_links: bool = False) -> Iterator[Finding]:
    """The broken links of the installed set; with `feature_links`, also those that break only a feature (guarded,
    lazy, on-demand imports), as info. Those are left out by default: lock and plan accept such pairs by rule, the
    index cannot see the version check that usually stands around them, and a set compat chose must pass compat's
    own gate at every --fail-on level."""
    if isinstance(facts.packages, Unknown):
        return  # the requirements check already says the packages are unknown
    source = source if source is not None else ApiSource(matrix.roots)
    installed = {d.name: d.public_version for d in facts.packages}
    for link in installed_set_links(source, installed, feature_links=feature_links):
        yield _finding(link, matrix)


def _how(link: BrokenLink) -> str:
    if link.on_demand:
        return f"when {link.edge.module} loads ({link.on_demand})"
    return _HOW[link.edge.kind]


def _finding(link: BrokenLink, matrix: Matrix) -> Finding:
    e = link.edge
    imported = f"{e.name} from {e.target}" if e.name else e.target
    present = ", ".join(s.first if s.first == s.last else f"{s.first} - {s.last}" for s in link.present)
    values = {
        "importer": link.importer, "importer_version": link.importer_version, "provider": link.provider,
        "provider_version": link.provider_version, "module": e.module, "imported": imported, "present": present,
        "how": _how(link),
    }
    fixes = tuple(f for f in (link.importer_fix, link.provider_fix) if f)
    evidence = (curated(f"{link.importer} {link.importer_version}: {e.module} imports {imported} ({e.kind.value.replace('_', ' ')})"),
                curated(f"{link.provider} {link.provider_version} lacks {link.key}; indexed releases that have it: {present}"))
    return found(
        matrix, BROKEN if link.breaks_import else GUARDED, evidence=evidence, values=values,
        requires=fixes[:1], commands=tuple(f"pip install '{f}'" for f in fixes),
    )
