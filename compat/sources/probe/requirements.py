"""Packages from a requirements file or a PEP 751 lock (`doctor -r`): each package pinned to one version.

A requirements file is read as pip reads it: comments, `\\` continuations, `-r FILE` includes
(relative to the including file), per-requirement options (`--hash=...`) and environment markers
(evaluated for the judged interpreter: a line for another platform is not installed there). A
`-c FILE` line names constraints: they only narrow the versions of packages something else asks
for, and every package doctor judges here is already pinned, so constraints install nothing and are
not read. Other option lines (`--index-url`, `--extra-index-url`, `-f`) say nothing about pins.
(pip-api, which read these files before, took `-c constraints.txt` for a requirement named
"constraints.txt" and reads any file it is given, a FIFO included.)

A `pylock.toml` (`pylock.*.toml`, or any `.toml`) is read as PEP 751: each `[[packages]]` entry's
`name` and `version`, its `marker` evaluated the same way; `compat lock --full -o x.pylock.toml`
writes one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.errors import UsageError
from compat.model.facts import Distribution
from compat.redact import redact_text
from compat.regular_file import decode_text, read_regular
from compat.toml_text import TomlError, parse_toml
from compat.version_text import huge_number, short

if TYPE_CHECKING:
    from compat.matrix import Matrix

MAX_REQUIREMENT_LINE = 64 * 1024
"""Characters one requirement may have: a real one (markers, hashes) is a few hundred."""
MAX_FILE = 64 * 1024 * 1024
"""Bytes read of one requirements file or lock (the largest real lock is well under 1 MiB)."""
MAX_INCLUDES = 64
"""Files one `-r` may pull in, all levels together: a loop of includes ends here."""
_INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s*=\s*|\s+|(?=\S))(?P<path>\S+)")
_CONSTRAINT = re.compile(r"^(?:-c|--constraint)(?:\s*=\s*|\s+|(?=\S))\S+")


def read_requirements(
    path: Path, matrix: Matrix | None, *, markers: Mapping[str, str] | None = None,
) -> tuple[Distribution, ...]:
    """Pinned distributions, sorted by name; raises UsageError on an unpinned or bad line.

    `markers` is the judged interpreter's marker environment (None: the one running compat).
    """
    pins = _pylock_pins(path, markers) if _is_toml(path) else _pins(path, markers)
    dists = {}
    for name, version in pins:
        key = str(canonicalize_name(name))
        dists[key] = Distribution(name=key, version=version, requires=_requires_of(matrix, key, version), installer=None)
    return tuple(dists[k] for k in sorted(dists))


def read_requested(path: Path, *, markers: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The lines that ask for extras by name, as `name[extra,...]` sorted (`trl[vllm]==0.15.2` gives `trl[vllm]`):
    the one record of which extras were wanted, since installed metadata keeps none (a pylock names none)."""
    if _is_toml(path):
        return ()
    lines = {f"{canonicalize_name(req.name)}[{','.join(sorted(str(canonicalize_name(e)) for e in req.extras))}]"  # PEP 685
             for _, _, req in _requirements(path, [path]) if req.extras and _applies(req.marker, markers)}
    return tuple(sorted(lines))


def _is_toml(path: Path) -> bool:
    return path.name.lower().endswith(".toml")


def _read(path: Path) -> str:
    if not path.is_file():
        # is_file follows links and is False for a FIFO or a device, which would block or never end.
        what = "is not a regular file" if path.exists() else "does not exist"
        raise UsageError(f"requirements file {path} {what}")
    try:
        return decode_text(read_regular(path, limit=MAX_FILE))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc


def _applies(marker: Marker | None, markers: Mapping[str, str] | None) -> bool:
    if marker is None:
        return True
    env = dict(markers) if markers is not None else None
    try:
        return marker.evaluate(env)
    except (UndefinedEnvironmentName, UndefinedComparison):
        # a marker naming a variable this environment lacks, or comparing a version to a word: pip installs
        # nothing for it
        return False


def _pins(path: Path, markers: Mapping[str, str] | None) -> list[tuple[str, str]]:
    out = []
    for where, text, req in _requirements(path, [path]):
        if not _applies(req.marker, markers):
            continue
        out.append((req.name, _pinned(where, text, req)))
    return out


def _pinned(where: str, text: str, req: Requirement) -> str:
    if req.url:
        # `name @ https://.../name-1.2.3+cu129-....whl` (compat's own locks write vLLM's other CUDA builds so): the
        # wheel's file name is its pin; any other direct reference (a VCS URL, an sdist) pins nothing compat can read.
        version = _wheel_version(req)
        if version is None:
            raise UsageError(f"{where}: {redact_text(text)!r} is a direct reference to no wheel; compat needs name==version "
                             "or a wheel URL")
        return version
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
        raise UsageError(f"{where}: {redact_text(text)!r} is not pinned; compat needs name==version for every line")
    return specs[0].version


def _wheel_version(req: Requirement) -> str | None:
    from urllib.parse import unquote, urlsplit

    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    name = unquote(urlsplit(req.url or "").path.rsplit("/", 1)[-1])
    try:
        wheel, version, _build, _tags = parse_wheel_filename(name)
    except InvalidWheelFilename:
        return None
    return str(version) if wheel == canonicalize_name(req.name) else None


def _requirements(path: Path, seen: list[Path]) -> Iterator[tuple[str, str, Requirement]]:
    """(where, text, requirement) of each requirement line of `path` and the files it includes."""
    for n, line in _logical_lines(_read(path)):
        if line.startswith("-"):
            include = _INCLUDE.match(line)
            if include is not None:
                child = (path.parent / include["path"]).resolve()
                if child in seen:
                    continue  # pip reads a file once
                if len(seen) > MAX_INCLUDES:
                    raise UsageError(f"{path}:{n}: more than {MAX_INCLUDES} files included with -r")
                seen.append(child)
                yield from _requirements(child, seen)
            # -c FILE (constraints install nothing), --index-url, -f, ...: nothing about pins
            continue
        text = _requirement_part(line)
        if len(text) > MAX_REQUIREMENT_LINE:  # the parsers' time grows faster than the line
            raise UsageError(f"{path}:{n}: a line longer than {MAX_REQUIREMENT_LINE} characters is not a requirement")
        if huge_number(text):  # packaging would turn the number into an int: a traceback, not a verdict
            raise UsageError(f"{path}:{n}: {short(redact_text(text))} holds a number no version has")
        try:
            yield f"{path}:{n}", text, Requirement(text)
        except InvalidRequirement as exc:
            why = str(exc).splitlines()[0]
            raise UsageError(f"{path}:{n}: {redact_text(text)[:200]!r} is not a requirement: {why}") from exc


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with comments gone and `\\` continuations joined, as pip joins them."""
    start, parts = 0, list[str]()
    for n, raw in enumerate(text.splitlines(), start=1):
        if not parts:
            start = n
        if raw.endswith("\\"):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        line = _uncomment(" ".join(parts)).strip()
        parts = []
        if line:
            yield start, line
    if parts:
        line = _uncomment(" ".join(parts)).strip()
        if line:
            yield start, line


def _uncomment(line: str) -> str:
    # pip: a comment starts the line or follows whitespace; '#' inside a URL fragment is kept
    return "" if line.lstrip().startswith("#") else re.split(r"\s#", line, maxsplit=1)[0]


def _requirement_part(line: str) -> str:
    """The requirement without its per-line options (`--hash=sha256:...`, `--config-settings ...`):
    as pip does, everything from the first word that starts with '-'."""
    words = line.split()
    keep = []
    for word in words:
        if word.startswith("-"):
            break
        keep.append(word)
    return " ".join(keep)


def _pylock_pins(path: Path, markers: Mapping[str, str] | None) -> list[tuple[str, str]]:
    try:
        data = parse_toml(_read(path))
    except TomlError as exc:
        raise UsageError(f"{path}: not a TOML file: {exc}") from exc
    packages = data.get("packages")
    if not isinstance(packages, list) or not all(isinstance(p, dict) for p in packages):
        raise UsageError(f"{path}: no [[packages]] table: not a pylock.toml (PEP 751)")
    out = []
    for i, entry in enumerate(packages):
        where = f"{path}: packages[{i}]"
        name, version, marker = entry.get("name"), entry.get("version"), entry.get("marker")
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"{where}.name: missing or not a string")
        if not isinstance(version, str):
            raise UsageError(f"{where} ({name[:80]!r}): no version; compat needs a version for every package")
        if not _is_version(version):  # PEP 751 requires a version pip could install: as `name==x.y` in a requirements file
            raise UsageError(f"{where}.version: {short(redact_text(version))} is not a version")
        try:
            parsed = Marker(marker) if isinstance(marker, str) else None
        except InvalidMarker as exc:
            raise UsageError(f"{where}.marker: {str(exc).splitlines()[0]}") from exc
        if _applies(parsed, markers):
            out.append((name, version))
    return out


def _requires_of(matrix: Matrix | None, name: str, version: str) -> tuple[str, ...]:
    if matrix is None:
        return ()
    releases = matrix.releases.get(name)
    if releases is None:
        return ()
    from packaging.version import Version

    try:
        wanted = Version(version)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return ()
    for release in releases.releases:
        if release.version == wanted:
            return tuple(str(r) for r in (release.requires or ()))
    return ()


def _is_version(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a number longer than int() reads
        return False
    return True
