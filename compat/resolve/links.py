"""Pairs of pinned releases that break at import time: what one release imports at top level from
another tracked package, and the other's release lacks (compat/timeline/links.py).

The provider asks `broken` for every requirement a pinned release makes: a candidate that lacks a
name its asker imports unguarded at top level is dropped (a BROKEN_LINK rejection, shown in the
conflict chain), and an already chosen one no longer satisfies that asker, so the resolver backtracks.
A package can import another it does not declare (liger-kernel imports trl): the search asks `set_breaks` of each
set it resolves, every ordered pair as doctor does, and goes around a pair that breaks (compat/resolve/catalog.py).
Guarded and lazy imports never rule a pair out, nor does a top-level import in a module that loads on
demand (one model's module, an experimental one: `BrokenLink.on_demand`), nor one of a name that only
newer provider releases have (`BrokenLink.added_later`: the declared requirements decide those): they
break a feature, not the import. What rules a pair out is a name the provider removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from compat.model.asker import Asker, AskerKind
from compat.model.rejection import Rejection, RejectionKind
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource, broken_links
from compat.timeline.records import BrokenLink, ImportKind

_TOP_LEVEL = frozenset({ImportKind.TOP_LEVEL})


class Links:
    """The link check over one API index, each pair decided once per process."""

    def __init__(self, source: ApiSource) -> None:
        self._source = source
        self._pairs: dict[tuple[str, str, str, str], BrokenLink | None] = {}
        self._names: frozenset[str] | None = None

    def broken(self, importer: str, importer_version: str, provider: str, provider_version: str) -> BrokenLink | None:
        """The first top-level import of `importer_version` that `provider_version` lacks; None when the
        pair links (or the index cannot say)."""
        key = (importer, importer_version, provider, provider_version)
        if key not in self._pairs:
            links = broken_links(self._source, importer, importer_version, provider, provider_version, _TOP_LEVEL,
                                 breaking_only=True)
            self._pairs[key] = links[0] if not isinstance(links, Unknown) and links else None
        return self._pairs[key]

    def rejection(self, asker: Asker, name: str, version: str) -> Rejection | None:
        """Why release `version` of `name` cannot serve the release that asked for it."""
        if asker.kind is not AskerKind.PACKAGE or asker.package is None or asker.version is None or asker.package == name:
            return None
        link = self.broken(asker.package, asker.version, name, version)
        if link is None:
            return None
        return Rejection(kind=RejectionKind.BROKEN_LINK, package=name, version=version,
                         asker=Asker(kind=AskerKind.PACKAGE, package=asker.package, version=asker.version),
                         imported=link.key)

    def set_breaks(self, pins: Mapping[str, str]) -> BrokenLink | None:
        """The first link of a whole resolved set (`{package: version}`) that breaks importing a package, judged as
        doctor judges an installed set (compat/timeline/links.py `installed_set_links`): every ordered pair of indexed
        packages, not only a requirement and its asker: a package that imports another it does not declare
        (liger-kernel's trl integration) is held to it too."""
        indexed = sorted(p for p in pins if p in self._indexed())
        return next((link for a in indexed for b in indexed
                     if a != b and (link := self.broken(a, pins[a], b, pins[b])) is not None), None)

    def _indexed(self) -> frozenset[str]:
        if self._names is None:
            self._names = frozenset(self._source.indexed())
        return self._names


_LINKS: dict[tuple[Path, ...], Links] = {}


def links_for(roots: Sequence[Path] | None) -> Links:
    """The link check over the API index of a matrix's directories (read once per process). One per index: a pair's
    answer depends on the index alone, and every branch of a search (each way around a known failure builds its
    own provider) asks about the same pairs again."""
    key = tuple(roots or ())
    links = _LINKS.get(key)
    if links is None:
        links = _LINKS[key] = Links(ApiSource(key or None))
    return links
