"""explain's on-demand API index: a package the shipped index (matrix/api) lacks, indexed when a log asks
about it, from the package index into the user's cache, by the one refresh (`refresh.refresh_package`).

Bounded in releases: the newest `NEWEST` final releases and as many spread over the older ones, the
releases the log states or the environment has and the listed releases on each side of them, then, for
each key the log asks about (a name, a module), the release where it appears or goes, narrowed by
halving the releases between the two indexed ones that differ (at most `ROUNDS` times). Bounded in
time by the HTTP client's deadline: past it no request starts and none runs on, the releases not read
are recorded as pending, and the next run reads them. A later run whose cache holds every release it
wants (and nothing pending) sends no request at all; without a client (`--offline`, or no package index
named) the cache alone answers.

The cache is a matrix root holding only `api/<package>/`, in the format of matrix/api; explain lays it
under the shipped index (`ApiSource`), so the shipped index always answers for a package it holds.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import Version

from compat.errors import MatrixError, PackageIndexError, UsageError
from compat.model.unknown import Unknown
from compat.timeline.index import PackageApi, load_api
from compat.timeline.index_check import check_api_dir
from compat.timeline.records import PENDING, ApiKind, ApiWanted, OnDemandIndex, OnDemandOutcome

if TYPE_CHECKING:
    from compat.maintain.index import IndexClient

NEWEST = 10
"""The newest final releases indexed on demand (the ones a current log most often runs)."""
ROUNDS = 6
"""Halvings towards the release where an asked key appears or goes (64 releases between two read ones)."""
MAX_PACKAGES = 3
"""Packages one explain indexes on demand; a log asking about more names the rest as not read."""
DEFAULT_BUDGET = 20.0
"""Seconds explain allows the package index by default (`--index-budget`)."""
FOLDER = "api-index"
"""The cache's folder: <cache>/api-index/api/<package>/."""


def cache_root(cache_dir: Path) -> Path:
    """The matrix root of the on-demand index under compat's cache directory."""
    return cache_dir / FOLDER


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return None


def choose_releases(available: Sequence[Version], versions: Sequence[str], newest: int = NEWEST) -> set[Version]:
    """Of the listed releases (oldest first): the newest `newest`, as many spread evenly over the older ones
    (so a key that went long ago shows between which two it went), each named version that is listed, and
    the listed releases on each side of every named version."""
    chosen = set(available[-newest:]) if newest > 0 else set()
    if 0 < newest < len(available):
        chosen.update(available[:: -(-len(available) // newest)])
    for text in versions:
        v = _version(text)
        if v is None:
            continue
        i = bisect.bisect_left(available, v)
        listed = i < len(available) and available[i] == v
        chosen.update(available[max(0, i - 1) : i + 1 + listed])
    return chosen


def _gaps(api: PackageApi, keys: Sequence[tuple[ApiKind, str]], listed: Sequence[Version]) -> list[tuple[str, str, str, list[Version]]]:
    """(key, indexed release, next indexed release, listed releases between) where a key is in one of
    two neighbouring indexed releases and not in the other, and listed releases lie between them."""
    indexed = [Version(r) for r in api.releases]
    out = []
    for kind, key in keys:
        has = [api.has(kind, key, r) is True for r in api.releases]
        for i in range(len(indexed) - 1):
            between = [v for v in listed if indexed[i] < v < indexed[i + 1]]
            if has[i] != has[i + 1] and between:
                out.append((key, api.releases[i], api.releases[i + 1], between))
    return out


def narrowing(api: PackageApi, keys: Sequence[tuple[ApiKind, str]], listed: Sequence[Version]) -> set[Version]:
    """For each key, the listed release halfway between two neighbouring indexed releases of which one
    has it and the other not (none when they are neighbours on the index, or all between are unreadable)."""
    out: set[Version] = set()
    for _key, _first, _last, between in _gaps(api, keys, listed):
        readable = [v for v in between if str(v) not in api.missing or api.missing[str(v)].startswith(PENDING)]
        if readable:
            out.add(readable[len(readable) // 2])
    return out


def _unnarrowed(api: PackageApi | Unknown, keys: Sequence[tuple[ApiKind, str]], listed: Sequence[Version]) -> str | None:
    """In words, a key whose change is not narrowed down to one release (its answer names the next release read)."""
    gaps = _gaps(api, keys, listed) if not isinstance(api, Unknown) else []
    if not gaps:
        return None
    key, first, last, between = gaps[0]
    return (f"where {key} changed lies between {first} and {last}, and the {len(between)} release(s) between "
            f"are not read: the release the answer names may be later than the one that changed it")


def _cached(root: Path, package: str) -> PackageApi | Unknown:
    try:
        return load_api(package, root)
    except MatrixError as exc:
        return Unknown(reason=f"the cached index is unreadable ({exc})")


def _covers(api: PackageApi, want: ApiWanted) -> bool:
    """Whether the cache holds every release `want` names (indexed or settled as unreadable), none pending."""
    if not api.releases or any(why.startswith(PENDING) for why in api.missing.values()):
        return False
    have = {v for r in (*api.releases, *api.missing) if (v := _version(r)) is not None}
    return all(v in have for v in map(_version, want.versions) if v is not None)


def _only(releases: set[Version]) -> Callable[[Sequence[Version]], set[Version]]:
    return lambda _listed: releases


def _read(client: IndexClient, want: ApiWanted, directory: Path, deadline: float | None) -> tuple[int, str | None]:
    """Index the chosen releases, then narrow each asked key; (releases read, why it stopped early). No release
    starts past `deadline` (a `time.monotonic()` instant; the client's requests stop there too)."""
    from compat.timeline.refresh import refresh_package  # the index client's code: imported only when the index is read

    listed: list[Version] = []

    def first(available: Sequence[Version]) -> set[Version]:
        listed[:] = available
        return choose_releases(available, want.versions)

    def stop() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    added = 0
    root = directory.parent.parent
    problem = None
    try:
        added += refresh_package(client, want.package, directory, choose=first, stop=stop).added
        for _ in range(ROUNDS):
            api = _cached(root, want.package)
            todo = narrowing(api, want.keys, listed) if not isinstance(api, Unknown) else set()
            if not todo:
                break
            more = refresh_package(client, want.package, directory, choose=_only(todo), stop=stop).added
            added += more
            if not more:
                break  # what is left between is unreadable or pending: the next run tries again
    except PackageIndexError as exc:
        problem = str(exc)
    except (UsageError, MatrixError) as exc:
        problem = f"the cached index cannot be extended ({exc}); remove {directory} to index it again"
    except OSError as exc:
        problem = f"the cache cannot be written ({exc.strerror or exc})"
    return added, _joined(problem, _unnarrowed(_cached(root, want.package), want.keys, listed))


def _left_over(api: PackageApi | Unknown) -> str | None:
    """What the cached index says it could not read, in words."""
    if isinstance(api, Unknown):
        return None
    pending = sorted(r for r, why in api.missing.items() if why.startswith(PENDING))
    unreadable = [(r, why) for r, why in api.missing.items() if not why.startswith(PENDING)]
    parts = []
    if pending:
        parts.append(f"{len(pending)} release(s) not read yet ({', '.join(pending[:3])}{', ...' if len(pending) > 3 else ''}): "
                     f"{api.missing[pending[0]].rpartition(': ')[2]}")
    if unreadable:
        r, why = unreadable[-1]
        parts.append(f"{len(unreadable)} release(s) unreadable ({r}: {why})")
    return "; ".join(parts) or None


def _joined(*reasons: str | None) -> str | None:
    return "; ".join(r for r in reasons if r) or None


def index_package(
    client: IndexClient | None, want: ApiWanted, root: Path, *, local: str, deadline: float | None = None,
) -> OnDemandIndex:
    """Index one package into the cache under `root` (client None: the cache alone, `local` says why); no
    release starts past `deadline`, the client's own."""
    started = time.monotonic()
    cached = _cached(root, want.package)
    held = () if isinstance(cached, Unknown) else cached.releases

    def record(outcome: OnDemandOutcome, releases: tuple[str, ...], added: int, requests: int, reason: str | None) -> OnDemandIndex:
        return OnDemandIndex(package=want.package, outcome=outcome, releases=releases, added=added, requests=requests,
                             seconds=round(time.monotonic() - started, 1), reason=reason)

    if client is None:
        if held:
            return record(OnDemandOutcome.CACHED, held, 0, 0, _joined(local, _left_over(cached)))
        why = cached.reason if isinstance(cached, Unknown) and "unreadable" in cached.reason else "no earlier run indexed it"
        return record(OnDemandOutcome.UNKNOWN, (), 0, 0, f"{local}, and {why}")
    if not isinstance(cached, Unknown) and _covers(cached, want):
        return record(OnDemandOutcome.CACHED, held, 0, 0, _left_over(cached))
    directory = root / "api" / want.package
    broken = check_api_dir(directory, str(directory))[:1] if (directory / "releases.json").is_file() else []
    if broken:  # the refresh would stop on it too: say so before a request is sent
        return record(OnDemandOutcome.UNKNOWN, (), 0, 0, f"the cached index is broken ({broken[0]}); remove {directory} to index it again")
    before = client.requests_made
    added, problem = _read(client, want, directory, deadline)
    after = _cached(root, want.package)
    releases = () if isinstance(after, Unknown) else after.releases
    outcome = OnDemandOutcome.INDEXED if added else OnDemandOutcome.CACHED if releases else OnDemandOutcome.UNKNOWN
    reason = _joined(problem, _left_over(after))
    if outcome is OnDemandOutcome.UNKNOWN and reason is None:
        reason = "the package index lists no final release of it"
    return record(outcome, releases, added, client.requests_made - before, reason)


def index_on_demand(
    client: IndexClient | None, wanted: Sequence[ApiWanted], root: Path | None, *, local: str = "",
    deadline: float | None = None,
) -> tuple[OnDemandIndex, ...]:
    """Index each wanted package into the cache (`root`: `cache_root`; None: no cache, nothing is indexed);
    `local` says why `client` is None (offline, or no package index named); `deadline`: the client's."""
    out = []
    for i, want in enumerate(wanted):
        if root is None or i >= MAX_PACKAGES:
            why = "no cache directory to index it into (COMPAT_NO_CACHE)" if root is None else \
                f"not read: a log asks about more than {MAX_PACKAGES} packages the shipped index lacks"
            out.append(OnDemandIndex(package=want.package, outcome=OnDemandOutcome.UNKNOWN, releases=(), added=0,
                                     requests=0, seconds=0.0, reason=why))
            continue
        out.append(index_package(client, want, root, local=local, deadline=deadline))
    return tuple(out)


__all__ = ["DEFAULT_BUDGET", "cache_root", "choose_releases", "index_on_demand", "index_package", "narrowing"]
