"""`compat matrix refresh --api`: extend matrix/api/<package>/ with the releases it does not hold yet.

For each tracked package whose Python code matters (`API_PACKAGES`): the index lists the files;
each final release not yet indexed gets one file read (the wheel refresh reads for metadata, or the
sdist when a release has no wheel). Of a wheel only the central directory, the package's `.py`
members, `entry_points.txt` and the names of its scripts are read, by range requests; a member whose
path, CRC-32 and size equal the previous release's is not fetched again, its extraction is reused.
Releases are immutable, so a release already in the index (or recorded as not extractable) is never
fetched again; one recorded as "pending: ..." (network trouble, or a refresh stopped before it)
is. The package's files are rewritten atomically every `checkpoint` releases, so an
interrupted refresh keeps what it finished.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.atomic import write_atomic
from compat.errors import IndexBudgetSpent, PackageIndexError, UsageError
from compat.maintain.index import IndexClient, IndexFile
from compat.maintain.refresh import choose_file
from compat.maintain.remote_zip import Member, RemoteZip
from compat.matrix.releases import TRACKED
from compat.timeline.combine import ReleaseApi, combine
from compat.timeline.extract import ModuleInfo, extract_module, module_name
from compat.timeline.index import IMPORTS, SCHEMA, decode_spans, encode_spans, import_names
from compat.timeline.index_check import check_api_dir
from compat.timeline.records import LATE_KINDS, PENDING, ApiKind, ApiOutcome

API_PACKAGES: tuple[str, ...] = (
    "accelerate",
    "bitsandbytes",
    "datasets",
    "deepspeed",
    "flash-attn",
    "huggingface-hub",
    "liger-kernel",
    "peft",
    "torch",
    "transformers",
    "trl",
    "vllm",
)
"""Tracked packages whose Python API the index records (the rest are native kernels or images)."""

NO_PARAMS = frozenset({"torch"})
"""Packages whose parameters are not keyed: torch's public callables are mostly native (no Python signature)."""

SDIST_LIMIT = 256 * 1024 * 1024
NOT_EXTRACTABLE = "not extractable"


class _Timeline:
    """A package's keys as sets of releases, read from and written to its directory."""

    shard_bytes = 250_000
    """A table past this much JSON is split into shards (one lookup parses one shard)."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.releases: dict[str, str] = {}
        """release -> file read."""
        self.missing: dict[str, str] = {}
        self.tables: dict[str, dict[str, set[str]]] = {k.value: {} for k in ApiKind}
        self.tables[IMPORTS] = {}
        self.since: dict[str, str] = {}
        """Late kinds (`LATE_KINDS`) -> the first release from which they are recorded."""

    @classmethod
    def read(cls, directory: Path, package: str, *, tables: bool = True) -> _Timeline:
        """The package's index as sets of releases; `tables=False` reads only releases.json."""
        timeline = cls(package)
        meta_path = directory / "releases.json"
        if not meta_path.is_file():
            return timeline
        problems = check_api_dir(directory, f"matrix/api/{package}") if tables else []
        if problems:
            raise UsageError(f"cannot extend a broken API index: {problems[0]}")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        releases = meta["releases"]
        timeline.releases = dict(zip(releases, meta["files"], strict=True))
        timeline.missing = dict(meta.get("missing", {}))
        timeline.since = dict(meta.get("since", {}))
        shards = meta.get("shards", {})
        for kind in LATE_KINDS:
            if releases and kind.value not in timeline.since and kind.value not in shards \
                    and not (directory / f"{kind.value}.json.gz").is_file():
                timeline.since[kind.value] = ""  # an index built before the kind existed: no release has it yet
        for stem in timeline.tables if tables else ():
            names = [f"{stem}.{i}" for i in range(len(shards[stem]) + 1)] if stem in shards else [stem]
            for name in names:
                path = directory / f"{name}.json.gz"
                if path.is_file():
                    timeline.load(stem, json.loads(gzip.decompress(path.read_bytes())), releases)
        return timeline

    def load(self, stem: str, table: dict[str, str], releases: list[str]) -> None:
        for key, text in table.items():
            self.tables[stem][key] = {releases[i] for a, b in decode_spans(text) for i in range(a, b + 1)}

    def add(self, release: str, file: str, api: ReleaseApi) -> None:
        self.releases[release] = file
        self.missing.pop(release, None)
        for kind in LATE_KINDS:
            since = self.since.get(kind.value)
            if since == "" or (since and Version(release) < Version(since) and self._contiguous(release, since)):
                self.since[kind.value] = release
        for kind, keys in api.keys.items():
            table = self.tables[kind.value]
            for key in keys:
                table.setdefault(key, set()).add(release)
        for key in api.imports:
            self.tables[IMPORTS].setdefault(key, set()).add(release)

    def _contiguous(self, release: str, since: str) -> bool:
        """Whether no indexed release lies between `release` and `since` (both then have the late kinds)."""
        return not any(Version(release) < Version(r) < Version(since) for r in self.releases)

    def forget(self, releases: Iterable[str]) -> None:
        """Drop these releases and their keys, to extract them again (a backfill of the late kinds).
        Extracted again oldest first, each one joins the late kinds' range as `add` records it."""
        gone = set(releases)
        for table in self.tables.values():
            for key in list(table):
                table[key] -= gone
                if not table[key]:
                    del table[key]
        for release in gone:
            self.releases.pop(release, None)

    def join_param_families(self) -> None:
        """Give `M:Q(p)` the releases where any module's `Q(p)` exists while M still exposes Q.

        A callable's parameters are keyed under the shallowest public module exposing it, and that
        module can change between releases when another module starts or stops re-exporting it; the
        parameter did not come and go. Joining the family makes each key's ranges hold across such a
        change. Idempotent, so a refresh that adds releases keeps every key consistent.
        """
        params = self.tables[ApiKind.PARAM.value]
        names = self.tables[ApiKind.NAME.value]
        families: dict[str, list[str]] = {}
        for key in params:
            module, _, rest = key.partition(":")
            families.setdefault(rest, []).append(module)
        for rest, modules in families.items():
            if len(modules) < 2:
                continue
            union: set[str] = set().union(*(params[f"{m}:{rest}"] for m in modules))
            head = rest.split("(", 1)[0].split(".", 1)[0]
            for module in modules:
                exposed = names.get(f"{module}:{head}", set())
                params[f"{module}:{rest}"] |= union & exposed

    def write(self, directory: Path) -> None:
        self.join_param_families()
        ordered = sorted(self.releases, key=Version)
        index = {r: i for i, r in enumerate(ordered)}
        shards: dict[str, list[str]] = {}
        written = set()
        for stem, table in self.tables.items():
            if self.since.get(stem) == "":
                continue  # no release has this late kind yet: no file says so (PackageApi.start)
            parts: list[dict[str, str]] = [{}]
            size = 0
            for key in sorted(table):
                text = encode_spans(index[r] for r in table[key])
                if size > self.shard_bytes:
                    parts.append({})
                    size = 0
                parts[-1][key] = text
                size += len(key) + len(text) + 6
            if len(parts) > 1:
                shards[stem] = [min(part) for part in parts[1:]]
            for i, part in enumerate(parts):
                name = f"{stem}.{i}.json.gz" if len(parts) > 1 else f"{stem}.json.gz"
                raw = json.dumps(part, separators=(",", ":"), sort_keys=True).encode()
                _write(directory / name, gzip.compress(raw, compresslevel=9, mtime=0))
                written.add(name)
        meta = {
            "schema": SCHEMA,
            "package": self.package,
            "top_level": list(import_names(self.package)),
            "releases": ordered,
            "files": [self.releases[r] for r in ordered],
            "missing": dict(sorted(self.missing.items(), key=lambda kv: Version(kv[0]))),
            **({"since": since} if (since := {k: v for k, v in sorted(self.since.items()) if v and v != ordered[0]}) else {}),
            "shards": dict(sorted(shards.items())),
        }
        _write(directory / "releases.json", (json.dumps(meta, indent=1, sort_keys=True) + "\n").encode())
        for stale in directory.glob("*.json.gz"):
            if stale.name not in written:  # a table that is now split (or no longer split)
                stale.unlink()


def _write(path: Path, data: bytes) -> None:
    write_atomic(path, data)
    path.chmod(0o644)  # shipped data: readable by all, like the files git checks out


class _Extractor:
    """Reads one package's releases in order, reusing unchanged members' extraction."""

    def __init__(self, client: IndexClient, package: str) -> None:
        self.client = client
        self.package = package
        self.own = import_names(package)
        self.roots = tuple(r for p in TRACKED for r in import_names(p))
        self.cache: dict[str, tuple[int, int, ModuleInfo]] = {}

    def wanted(self, name: str) -> bool:
        if name.endswith(".dist-info/entry_points.txt"):
            return True
        path = _package_path(name)
        return path is not None and path.split("/")[0] in self.own and name.endswith(".py")

    def plan(self, members: Sequence[Member], previous: Sequence[Member] = ()) -> list[Member]:
        """Wanted members that differ (path, CRC, size) from the previous release's and from the cache."""
        before = {(_package_path(m.name), m.crc, m.size) for m in previous}
        out = []
        for m in members:
            if not self.wanted(m.name):
                continue
            path = _package_path(m.name) or m.name
            hit = self.cache.get(path)
            if m.name.endswith(".txt") or ((path, m.crc, m.size) not in before and (hit is None or hit[:2] != (m.crc, m.size))):
                out.append(m)
        return out

    def release(
        self, members: Sequence[Member], data: dict[str, bytes], more: Callable[[list[Member]], dict[str, bytes]] | None = None
    ) -> ReleaseApi:
        """The release's keys; `more` reads members the prefetch did not (a previous release failed)."""
        if more is not None:
            late = [m for m in self.plan(members) if m.name not in data]
            if late:
                data = {**data, **more(late)}
        modules: dict[str, ModuleInfo] = {}
        entry_points = None
        scripts = []
        for m in members:
            if m.name.endswith(".dist-info/entry_points.txt") and m.name.count("/") == 1:
                raw = data.get(m.name)
                entry_points = raw.decode("utf-8", "replace") if raw is not None else None
                continue
            parts = m.name.split("/")
            if len(parts) == 3 and parts[0].endswith(".data") and parts[1] == "scripts":
                scripts.append(parts[2])
                continue
            if not self.wanted(m.name):
                continue
            path = _package_path(m.name) or m.name
            named = module_name(path)
            if named is None:
                continue
            hit = self.cache.get(path)
            if hit is not None and hit[:2] == (m.crc, m.size):
                modules[named[0]] = hit[2]
                continue
            source = data.get(m.name)
            if source is None:
                raise PackageIndexError(f"{m.name}: could not be read")
            info = extract_module(source, *named)
            self.cache[path] = (m.crc, m.size, info)
            modules[named[0]] = info
        return combine(
            self.package,
            modules,
            entry_points=entry_points,
            scripts=scripts,
            own=self.own,
            tracked_roots=self.roots,
            params=self.package not in NO_PARAMS,
        )


def _package_path(name: str) -> str | None:
    """A member's path inside site-packages (wheel `*.data/purelib/` prefixes dropped)."""
    parts = name.split("/")
    if parts[0].endswith(".data") and len(parts) > 2 and parts[1] in ("purelib", "platlib"):
        return "/".join(parts[2:])
    if parts[0].endswith((".dist-info", ".data")):
        return None
    return name


def _sdist_members(blob: bytes, filename: str) -> list[tuple[str, bytes]]:
    """(path below the sdist's top folder, bytes) of its .py files and entry_points.txt."""
    out: list[tuple[str, bytes]] = []
    if filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            for info in archive.infolist():
                if info.file_size < 64 * 1024 * 1024 and info.filename.endswith((".py", "entry_points.txt")):
                    out.append((info.filename.partition("/")[2], archive.read(info)))
        return out
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as archive:
        for entry in archive:
            if not entry.isfile() or entry.size > 64 * 1024 * 1024:
                continue
            if entry.name.endswith((".py", "entry_points.txt")):
                handle = archive.extractfile(entry)
                if handle is not None:
                    out.append((entry.name.partition("/")[2], handle.read()))
    return out


def _sdist_release(extractor: _Extractor, client: IndexClient, file: IndexFile) -> ReleaseApi:
    try:
        files = _sdist_members(client.download(file.url, limit=SDIST_LIMIT), file.filename)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        raise PackageIndexError(f"{file.filename}: unreadable sdist ({exc})") from exc
    members = []
    data: dict[str, bytes] = {}
    for path, raw in files:
        if path.endswith("entry_points.txt"):
            if path.endswith(".egg-info/entry_points.txt") and path.count("/") == 1:
                name = "sdist.dist-info/entry_points.txt"
            else:
                continue
        else:
            name = path.removeprefix("src/")
        members.append(Member(name=name, offset=0, compressed=len(raw), size=len(raw), crc=zlib.crc32(raw), method=0))
        data[name] = raw
    return extractor.release(members, data)


def choose_api_file(files: Sequence[IndexFile]) -> IndexFile | None:
    """The wheel refresh reads for metadata, else the smallest-named sdist; None when neither exists."""
    wheel = choose_file(files)
    if wheel is not None:
        return wheel
    sdists = sorted((f for f in files if f.filename.endswith((".tar.gz", ".zip", ".tgz"))), key=lambda f: (f.yanked, f.filename))
    return sdists[0] if sdists else None


class _WheelReader:
    """The API members of a run of wheels: every central directory is fetched at once, and the members
    of the next wheels that differ from the wheel before each are fetched while the main thread parses."""

    def __init__(self, client: IndexClient, extractor: _Extractor, pool: ThreadPoolExecutor, files: dict[Version, IndexFile]) -> None:
        self.client = client
        self.extractor = extractor
        self.pool = pool
        self.wheels = list(files)
        self.directories: dict[Version, Future[RemoteZip]] = {v: pool.submit(self._directory, f) for v, f in files.items()}
        self.reads: dict[Version, Future[dict[str, bytes]]] = {}

    def _directory(self, file: IndexFile) -> RemoteZip:
        return RemoteZip(lambda start, length: self.client.byte_range(file.url, start, length), file.filename)

    def _read_ahead(self, i: int) -> None:
        # The members of wheel i that differ from wheel i-1: fetched while the main thread parses.
        if i >= len(self.wheels) or self.wheels[i] in self.reads:
            return
        v = self.wheels[i]
        mine, before = self.directories[v], self.directories[self.wheels[i - 1]] if i else None

        def fetch() -> dict[str, bytes]:
            remote = mine.result()
            return remote.read(self.extractor.plan(remote.members, before.result().members if before else ()))

        self.reads[v] = self.pool.submit(fetch)

    def release(self, v: Version) -> ReleaseApi:
        """The keys of wheel `v`; raises PackageIndexError."""
        at = self.wheels.index(v)
        for ahead in range(at, at + 3):
            self._read_ahead(ahead)
        remote = self.directories[v].result()
        data = self.reads.pop(v).result()
        return self.extractor.release(remote.members, data, remote.read)


Choose = Callable[[Sequence[Version]], Collection[Version]]
"""Of every final release the index lists (oldest first), those to index (explain's on-demand bound)."""


def _todo(
    client: IndexClient, package: str, timeline: _Timeline, limit: int | None, choose: Choose | None = None,
) -> dict[Version, list[IndexFile]]:
    """The final releases not yet indexed (nor settled as missing), oldest first, with their files."""
    by_version: dict[Version, list[IndexFile]] = {}
    for f in client.project_files(package):
        if not f.version.is_prerelease and not f.version.local:
            by_version.setdefault(f.version, []).append(f)
    settled = {r for r, why in timeline.missing.items() if not why.startswith(PENDING)}
    known = {Version(r) for r in timeline.releases} | {Version(r) for r in settled}
    chosen = set(choose(sorted(by_version))) if choose is not None else set(by_version)
    todo = [v for v in sorted(by_version) if v not in known and v in chosen]
    if limit is not None:
        todo = todo[-limit:] if limit >= 0 else todo
    return {v: by_version[v] for v in todo}


def _without_late_kinds(timeline: _Timeline) -> list[str]:
    """The indexed releases, oldest first, that do not have the late kinds: those before `since`
    (a backfill extends the range downwards), or all when no release has them."""
    since = timeline.since.get(ApiKind.MEMBER.value)
    ordered = sorted(timeline.releases, key=Version)
    if since is None:  # recorded from the first release (no entry): nothing to backfill
        return []
    return [r for r in ordered if since == "" or Version(r) < Version(since)]


def _backfill(client: IndexClient, package: str, timeline: _Timeline, redo: list[str]) -> dict[Version, list[IndexFile]]:
    """Forget `redo` (indexed releases) and return them with their files, to extract them again."""
    wanted = {Version(r) for r in redo}
    files: dict[Version, list[IndexFile]] = {}
    for f in client.project_files(package):
        if f.version in wanted:
            files.setdefault(f.version, []).append(f)
    timeline.forget(str(v) for v in files)
    return dict(sorted(files.items()))


def _extract(
    client: IndexClient,
    package: str,
    timeline: _Timeline,
    todo: dict[Version, list[IndexFile]],
    *,
    directory: Path,
    workers: int,
    checkpoint: int,
    progress: Callable[[str], None] | None,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Add each release of `todo` to `timeline` (or record why it is missing); the number added. Once `stop()`
    is true the releases left are recorded as pending, unread (parsing a big release takes seconds)."""
    extractor = _Extractor(client, package)
    chosen = {v: choose_api_file(files) for v, files in todo.items()}
    added = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        reader = _WheelReader(client, extractor, pool, {v: wf for v in todo if (wf := chosen[v]) is not None and wf.wheel})
        for v in todo:
            file = chosen[v]
            release = str(v)
            if file is None:
                timeline.missing[release] = f"{NOT_EXTRACTABLE}: no wheel or sdist"
                continue
            if stop is not None and stop():
                timeline.missing[release] = f"{PENDING}not read, the time allowed ran out"
                continue
            try:
                api = reader.release(v) if file.wheel else _sdist_release(extractor, client, file)
            except PackageIndexError as exc:
                transient = isinstance(exc, IndexBudgetSpent) or "failed after" in str(exc) or "HTTP 5" in str(exc)
                timeline.missing[release] = f"{PENDING}{exc}"[:300] if transient else str(exc)[:300]
                if progress:
                    progress(f"{package} {release}: {exc}")
                continue
            timeline.add(release, file.filename, api)
            added += 1
            if progress:
                progress(f"{package} {release}: {sum(len(k) for k in api.keys.values())} keys")
            if added % checkpoint == 0:
                timeline.write(directory)
    return added


def refresh_package(
    client: IndexClient,
    package: str,
    directory: Path,
    *,
    workers: int = 4,
    checkpoint: int = 10,
    limit: int | None = None,
    backfill: int | None = None,
    progress: Callable[[str], None] | None = None,
    choose: Choose | None = None,
    stop: Callable[[], bool] | None = None,
) -> ApiOutcome:
    """Extract the releases of one package not yet in `directory` and rewrite it; raises PackageIndexError.
    `choose`, when given, picks the releases to consider (the others are neither read nor recorded); once
    `stop()` is true no further release is read (they are recorded as pending)."""
    started = time.monotonic()
    requests_before = client.requests_made
    package = canonicalize_name(package)
    timeline = _Timeline.read(directory, package, tables=False)
    todo = _todo(client, package, timeline, limit, choose)
    redo = _without_late_kinds(timeline)[-backfill:] if backfill else []
    added = 0
    if todo or redo:  # with nothing new the index stays byte for byte as it is
        timeline = _Timeline.read(directory, package)
        if redo:
            todo = dict(sorted({**_backfill(client, package, timeline, redo), **todo}.items()))
        added = _extract(client, package, timeline, todo, directory=directory, workers=workers, checkpoint=checkpoint,
                         progress=progress, stop=stop)
        timeline.write(directory)
    return ApiOutcome(
        package=package,
        releases=len(timeline.releases),
        added=added,
        missing=len(timeline.missing),
        requests=client.requests_made - requests_before,
        seconds=round(time.monotonic() - started, 1),
    )


def refresh_api(
    packages: Sequence[str],
    *,
    out_dir: Path,
    client: IndexClient,
    workers: int = 4,
    limit: int | None = None,
    backfill: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[ApiOutcome, ...]:
    """Extend the API index of each package (default: every package in API_PACKAGES)."""
    names: list[str] = [canonicalize_name(p) for p in packages] or list(API_PACKAGES)
    unknown = sorted(set(names) - set(API_PACKAGES))
    if unknown:
        raise UsageError(f"no API index for: {', '.join(unknown)} (indexed: {', '.join(API_PACKAGES)})")
    return tuple(
        refresh_package(client, name, out_dir / name, workers=workers, limit=limit, backfill=backfill, progress=progress)
        for name in sorted(set(names))
    )


__all__ = ["API_PACKAGES", "ApiOutcome", "choose_api_file", "refresh_api", "refresh_package"]
