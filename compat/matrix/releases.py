"""Every release of the tracked packages (matrix/releases/<package>.toml, generated).

The files are written by `compat matrix refresh` (compat/refresh.py) from each release's own core
metadata, so `compat lock` and `compat doctor` know offline what a release really requires. The
format (one file per package, releases oldest first):

    package = "vllm"
    source = "..."

    [[release]]
    version = "0.7.2"
    uploaded = "2025-02-06"
    requires_python = ">=3.9"
    requires = ["torch==2.5.1", "transformers>=4.48.2", ...]   # tracked packages only
    extras = ["audio", "video"]

and, for a release whose requirements could not be read (no wheel, so no served metadata; the
loaded Release then has `requires = None` and the reason in `requires_unknown`):

    requires_unknown = "sdist-only"

Overlays (`--matrix DIR`) extend a shipped package with new versions or add new packages; a version
defined twice is an error that names both files.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, is_normalized_name
from packaging.version import Version

from compat.atomic import write_atomic
from compat.errors import MatrixError
from compat.matrix._toml import MAX_BYTES, Table, read_toml
from compat.model.unknown import Unknown
from compat.regular_file import read_regular

if TYPE_CHECKING:
    from packaging.requirements import Requirement

TRACKED: tuple[str, ...] = (
    "accelerate",
    "bitsandbytes",
    "datasets",
    "deepspeed",
    "flash-attn",
    "flashinfer-cubin",
    "flashinfer-python",
    "huggingface-hub",
    "liger-kernel",
    "peft",
    "torch",
    "torchaudio",
    "torchvision",
    "transformers",
    "triton",
    "trl",
    "vllm",
    "xformers",
)
"""Canonical names of the packages whose releases the matrix records (and whose requirements it keeps)."""

SOURCE = "release metadata: the package index's simple API (files, upload times, yanks) and each release's wheel core metadata"

# The same requirement line recurs across hundreds of releases: each text is parsed once. Shared
# Requirement objects are never mutated (the model is frozen), which makes the sharing safe.
_PARSED: dict[str, Requirement] = {}
_PARSED_LOCK = threading.Lock()

MAX_NAME = 200
"""No distribution name is longer; a longer one would name a file past the file system's limit."""


def file_stem(package: str) -> str | None:
    """The canonical name a package's matrix file is named after; None for what is no project name at all
    ('/etc/x', 'a' * 300), which has no file and must not be joined to a directory."""
    name = canonicalize_name(package)
    return name if len(name) <= MAX_NAME and is_normalized_name(name) else None


_RELEASE_KEYS = ("version", "uploaded", "yanked", "yanked_reason", "requires_python", "requires", "requires_unknown", "extras")


@dataclass(frozen=True, kw_only=True)
class Release:
    version: Version
    """The release's version (never a pre-release)."""
    uploaded: str | Unknown
    """Date of the earliest file of the release (YYYY-MM-DD); Unknown when the index did not say."""
    yanked: bool
    """Every file of the release is yanked (PEP 592): pip only installs it when pinned exactly."""
    yanked_reason: str | None
    """The reason the index gives; None when not yanked or no reason given."""
    requires_python: SpecifierSet | None
    """Requires-Python; None when the release declares none (any Python)."""
    requires_text: tuple[str, ...] | None
    """Requires-Dist lines on tracked packages (normalized PEP 508 text); None when unknown."""
    requires_unknown: Unknown | None = None
    """Why the requirements are unknown (no wheel: "sdist-only"); None when they are known."""
    extras: tuple[str, ...] = ()
    """Provides-Extra, sorted."""
    where: str = field(default="", compare=False, repr=False)
    """File and key of this release, for an error found when its requirements are parsed."""

    @cached_property
    def requires(self) -> tuple[Requirement, ...] | None:
        """Requires-Dist on tracked packages, markers and extras kept; None when unknown (see requires_unknown).

        Parsed on first use: thousands of requirement lines cost more than the rest of the matrix,
        and a check reads a handful of releases. `compat matrix validate` parses them all.
        """
        if self.requires_text is None:
            return None
        from packaging.requirements import InvalidRequirement, Requirement  # a compiled matrix loads without it

        out = []
        for i, text in enumerate(self.requires_text):
            req = _PARSED.get(text)
            if req is None:
                try:
                    req = Requirement(text)
                except InvalidRequirement as exc:
                    file, _, key = self.where.partition("|")
                    raise MatrixError(file, f"{key}.requires[{i}]", f"{text!r} is not a PEP 508 requirement: {exc}") from exc
                with _PARSED_LOCK:
                    _PARSED[text] = req
            out.append(req)
        return tuple(out)

    def requires_of(self, name: str) -> tuple[Requirement, ...]:
        """The requirements on one package (every marker and extra), empty when unknown or none."""
        if self.requires is None:
            return ()
        wanted = canonicalize_name(name)
        return tuple(r for r in self.requires if canonicalize_name(r.name) == wanted)


@dataclass(frozen=True, kw_only=True)
class PackageReleases:
    package: str
    """Canonical project name."""
    releases: tuple[Release, ...]
    """Oldest first."""
    files: tuple[str, ...] = ()
    """The files (shipped first) the releases were read from."""

    def find(self, version: str | Version) -> Release | None:
        """The release with this version ("2.5.1+cu124" finds 2.5.1), None if not recorded."""
        try:
            wanted = Version(str(version))
        except ValueError:
            return None
        return self._by_version.get(Version(wanted.public))

    @cached_property
    def _by_version(self) -> dict[Version, Release]:
        # Asked for every candidate a lock ranks: one lookup, not a walk over hundreds of releases.
        out: dict[Version, Release] = {}
        for r in self.releases:
            out.setdefault(r.version, r)
        return out

    def within(self, spec: str) -> int:
        """The releases inside the range `spec` (pre-releases included), as a bit mask over `releases` (bit i: releases[i]).

        A lock asks the same range texts of the same package thousands of times while it backtracks, and every lock
        of a process asks them of the same snapshot: each text is answered once per snapshot, and a merged range is
        the AND of its texts' masks.
        """
        found = self._within.get(spec)
        if found is None:
            specifier = SpecifierSet(spec)
            found = sum(1 << i for i, r in enumerate(self.releases) if specifier.contains(r.version, prereleases=True))
            self._within[spec] = found
        return found

    @cached_property
    def _within(self) -> dict[str, int]:
        return {}

    def latest(self, *, yanked: bool = False) -> Release | None:
        pool = [r for r in self.releases if yanked or not r.yanked]
        return pool[-1] if pool else None


def parse_release(t: Table) -> Release:
    t.only(*_RELEASE_KEYS)
    version = t.version("version")
    if version.is_prerelease:
        t.fail("version", f"{version} is a pre-release (the matrix records final releases only)")
    unknown = None
    requires_text = None
    if "requires_unknown" in t:
        if "requires" in t:
            t.fail("requires_unknown", "give requires or requires_unknown, not both")
        unknown = Unknown(reason=t.str("requires_unknown"))
    else:
        requires_text = t.strs("requires")
    uploaded_text = t.str("uploaded", None)
    if uploaded_text is not None and not _is_date(uploaded_text):
        t.fail("uploaded", f"{uploaded_text!r} is not a date (YYYY-MM-DD)")
    yanked = t.bool("yanked", False)
    reason = t.str("yanked_reason", None)
    if reason is not None and not yanked:
        t.fail("yanked_reason", "given for a release that is not yanked")
    return Release(
        version=version,
        uploaded=uploaded_text if uploaded_text is not None else Unknown(reason="the index gave no upload time"),
        yanked=yanked,
        yanked_reason=reason,
        requires_python=_specifier(t, "requires_python"),
        requires_text=requires_text,
        requires_unknown=unknown,
        extras=tuple(sorted(t.strs("extras", ()))),
        where=f"{t.file}|{t.path}",
    )


_SPECS: dict[str, SpecifierSet] = {}


def _specifier(t: Table, key: str) -> SpecifierSet | None:
    text = t.str(key, None)
    if text is None:
        return None
    spec = _SPECS.get(text)
    if spec is None:
        spec = _SPECS[text] = t.specifier(key)
    return spec


def _is_date(text: str) -> bool:
    parts = text.split("-")
    return len(parts) == 3 and [len(p) for p in parts] == [4, 2, 2] and all(p.isdigit() for p in parts)


def parse_releases_file(t: Table, *, expected: str | None = None) -> PackageReleases:
    """One releases file; `expected` is the package its file name promises."""
    t.only("package", "source", "release")
    package = t.str("package")
    if canonicalize_name(package) != package:
        t.fail("package", f"{package!r} is not a canonical name (use {canonicalize_name(package)!r})")
    if expected is not None and package != expected:
        t.fail("package", f"{package!r} does not match the file name ({expected}.toml)")
    t.str("source")
    releases = []
    seen: dict[Version, int] = {}
    for i, rt in enumerate(t.tables("release", ())):
        release = parse_release(rt)
        if release.version in seen:
            rt.fail("version", f"{release.version} is already release[{seen[release.version]}]")
        seen[release.version] = i
        releases.append(release)
    return PackageReleases(
        package=package,
        releases=tuple(sorted(releases, key=lambda r: r.version)),
        files=(t.file,),
    )


def merge_releases(parts: Sequence[PackageReleases]) -> PackageReleases:
    """Overlay files extend a package; a version in two files is an error naming both."""
    first = parts[0]
    owner: dict[Version, str] = {}
    merged: list[Release] = []
    for part in parts:
        for release in part.releases:
            if release.version in owner:
                raise MatrixError(
                    part.files[0],
                    f"release {release.version}",
                    f"already defined in {owner[release.version]} (an overlay may add versions, not redefine them)",
                )
            owner[release.version] = part.files[0]
            merged.append(release)
    return PackageReleases(
        package=first.package,
        releases=tuple(sorted(merged, key=lambda r: r.version)),
        files=tuple(f for p in parts for f in p.files),
    )


class ReleaseIndex:
    """Loads matrix/releases/<package>.toml on first use (doctor rarely needs them all)."""

    def __init__(self, dirs: Sequence[Path], *, cache_dir: Path | None = None) -> None:
        self.dirs = tuple(dirs)
        self.cache_dir = cache_dir
        """compat's cache directory (parsed files go under parsed/); None: parse every time."""
        self._cache: dict[str, PackageReleases | None] = {}
        self._lock = threading.Lock()

    def _label(self, i: int, path: Path) -> str:
        # The first directory is the shipped one: name it the way a person finds it in the repository.
        return f"matrix/releases/{path.name}" if i == 0 else str(path)

    def packages(self) -> tuple[str, ...]:
        """Every package with a releases file in any directory, sorted."""
        names: set[str] = set()
        for d in self.dirs:
            if d.is_dir():
                names.update(p.stem for p in d.glob("*.toml"))
        return tuple(sorted(names))

    def get(self, package: str) -> PackageReleases | None:
        """The releases of a package, None when no directory has a file for it; raises MatrixError."""
        name = file_stem(package)
        if name is None:
            return None
        with self._lock:
            if name not in self._cache:
                self._cache[name] = self._load(name)
            return self._cache[name]

    def all(self) -> tuple[PackageReleases, ...]:
        """Every package, loaded (validation and benchmarks use this; the checks use get)."""
        return tuple(p for p in (self.get(n) for n in self.packages()) if p is not None)

    def _load(self, name: str) -> PackageReleases | None:
        parts = []
        for i, d in enumerate(self.dirs):
            path = d / f"{name}.toml"
            if path.is_file():
                parts.append(_parse_cached(path, self._label(i, path), self.cache_dir, name))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else merge_releases(parts)


KEPT_RELEASES = 256
"""Parsed releases files a process keeps, by content (the shipped files are about 40)."""

_KEPT: OrderedDict[tuple[str, str, str], tuple[PackageReleases, tuple[int, int] | None]] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def _parse_cached(path: Path, label: str, cache_dir: Path | None, name: str) -> PackageReleases:
    """parse_releases_file over the cached tables; a cache entry that does not validate is
    dropped and the file parsed again, so a wrong entry never blames the shipped file.

    Each load reads the file; bytes this process already parsed under the same label are answered
    from memory (the result is immutable) while the cache's entry for them is the one this process
    read or wrote (same size and modification time; any other is read and checked again). A process
    that loads the matrix many times (the library called in a loop, a test run) decoded and
    validated every file it used again on each load: a fifth of the CPU of a lock."""
    try:
        raw = read_regular(path, limit=MAX_BYTES)  # a FIFO or device refused, not read until it ends
    except OSError:
        return parse_releases_file(read_toml(path, label=label), expected=name)  # reports the error the usual way
    digest = hashlib.sha256(raw).hexdigest()
    entry = cache_dir / "parsed" / f"{digest}.json" if cache_dir is not None else None
    key = (digest, label, name)
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
    if kept is not None and (entry is None or (kept[1] is not None and kept[1] == _stamp(entry))):
        return kept[0]
    try:
        parsed = parse_releases_file(_read_cached(path, label, entry), expected=name)
    except (MatrixError, ValueError, TypeError, RecursionError):
        if entry is None:
            raise
        parsed = parse_releases_file(_read_cached(path, label, entry, refresh=True), expected=name)
    stamp = _stamp(entry) if entry is not None else None
    if entry is None or stamp is not None:
        with _KEPT_LOCK:
            _KEPT[key] = (parsed, stamp)
            while len(_KEPT) > KEPT_RELEASES:
                _KEPT.popitem(last=False)
    return parsed


def _stamp(entry: Path) -> tuple[int, int] | None:
    try:
        st = entry.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _read_cached(path: Path, label: str, entry: Path | None, *, refresh: bool = False) -> Table:
    """read_toml, memoised as JSON in `entry` (keyed by the file's sha256; None: no cache).

    tomllib is pure Python and the release files are large: parsing them is most of the cost of
    loading the matrix, while json (C) reads the same tables about ten times faster. The key is
    the content, so an edited or refreshed file is parsed again; any cache trouble falls back to
    parsing (validation always runs on the tables either way).
    """
    if entry is not None and not refresh:
        try:
            data = json.loads(entry.read_bytes())
            if isinstance(data, dict):
                return Table(data, file=label, path="")
        except (OSError, ValueError, RecursionError):
            pass
    table = read_toml(path, label=label)
    if entry is not None:
        try:
            blob = json.dumps(table.data).encode()
        except (TypeError, ValueError):
            return table  # a hand-written overlay with TOML dates: parse it every time
        try:
            write_atomic(entry, blob)
        except OSError:
            pass  # an unwritable cache only costs speed
    return table


# --- writing (compat matrix refresh) -------------------------------------------------------------
# tomllib only reads; the generated files use a tiny subset of TOML (strings, booleans, string
# arrays, one array of tables), written here in one fixed layout so a diff shows what changed upstream.


def toml_string(text: str) -> str:
    """A TOML string: a literal one ('...') when it can be, so markers stay readable, else a basic one."""
    if "'" not in text and not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        return f"'{text}'"
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _array(items: Iterable[str], indent: str = "") -> str:
    items = list(items)
    if not items:
        return "[]"
    one_line = "[" + ", ".join(toml_string(i) for i in items) + "]"
    if len(one_line) <= 80:
        return one_line
    return "[\n" + "".join(f"{indent}  {toml_string(i)},\n" for i in items) + f"{indent}]"


def release_requires_text(release: Release) -> list[str] | None:
    if release.requires is None:
        return None
    from packaging.requirements import Requirement

    return sorted({str(r) for r in release.requires}, key=lambda s: (canonicalize_name(Requirement(s).name), s))


def emit_releases(package: PackageReleases, *, header: str = "") -> str:
    """The TOML text of a releases file (deterministic: same releases, same bytes)."""
    lines = []
    if header:
        lines += [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"package = {toml_string(package.package)}", f"source = {toml_string(SOURCE)}"]
    for r in sorted(package.releases, key=lambda r: r.version):
        lines += ["", "[[release]]", f"version = {toml_string(str(r.version))}"]
        if not isinstance(r.uploaded, Unknown):
            lines.append(f"uploaded = {toml_string(r.uploaded)}")
        if r.yanked:
            lines.append("yanked = true")
            if r.yanked_reason:
                lines.append(f"yanked_reason = {toml_string(r.yanked_reason)}")
        if r.requires_python is not None:
            lines.append(f"requires_python = {toml_string(str(r.requires_python))}")
        reqs = release_requires_text(r)
        if reqs is None:
            reason = r.requires_unknown.reason if r.requires_unknown is not None else "unknown"
            lines.append(f"requires_unknown = {toml_string(reason)}")
        else:
            lines.append(f"requires = {_array(reqs)}")
        if r.extras:
            lines.append(f"extras = {_array(r.extras)}")
    return "\n".join(lines) + "\n"


__all__ = [
    "TRACKED",
    "PackageReleases",
    "Release",
    "ReleaseIndex",
    "emit_releases",
    "merge_releases",
    "parse_releases_file",
    "toml_string",
]
