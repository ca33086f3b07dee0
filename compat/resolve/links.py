"""Pairs of pinned releases that break at import time: what one release imports at top level from
another tracked package, and the other's release lacks (compat/timeline/links.py).

The provider asks `broken` for every requirement a pinned release makes: a candidate that lacks a
name its asker imports unguarded at top level is dropped (a BROKEN_LINK rejection, shown in the
conflict chain), and an already chosen one no longer satisfies that asker, so the resolver backtracks.
Guarded and lazy imports never rule a pair out, nor does a top-level import in a module that loads on
demand (one model's module, an experimental one: `BrokenLink.on_demand`), nor one of a name that only
newer provider releases have (`BrokenLink.added_later`: the declared requirements decide those): they
break a feature, not the import. What rules a pair out is a name the provider removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from compat.model.asker import Asker, AskerKind
from compat.model.rejection import Rejection, RejectionKind
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource, broken_links
from compat.timeline.records import BrokenLink, ImportKind

_TOP_LEVEL = frozenset({ImportKind.TOP_LEVEL})


class Links:
    """The link check for one resolution, each pair decided once."""

    def __init__(self, source: ApiSource) -> None:
        self._source = source
        self._pairs: dict[tuple[str, str, str, str], BrokenLink | None] = {}

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


_SOURCES: dict[tuple[Path, ...], ApiSource] = {}


def links_for(roots: Sequence[Path] | None) -> Links:
    """The link check over the API index of a matrix's directories (read once per process)."""
    key = tuple(roots or ())
    source = _SOURCES.get(key)
    if source is None:
        source = _SOURCES[key] = ApiSource(key or None)
    return Links(source)
