"""Packages from a requirements file (`-r`): each line must pin `name==version`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.errors import UsageError
from compat.model.facts import Distribution
from compat.redact import redact_text
from compat.version_text import huge_number, short

if TYPE_CHECKING:
    from compat.matrix import Matrix


def read_requirements(path: Path, matrix: Matrix | None) -> tuple[Distribution, ...]:
    """Pinned distributions, sorted by name; raises UsageError on an unpinned or bad line."""
    pins = _pins(path)
    dists = {}
    for name, version in pins:
        key = str(canonicalize_name(name))
        dists[key] = Distribution(name=key, version=version, requires=_requires_of(matrix, key, version), installer=None)
    return tuple(dists[k] for k in sorted(dists))


def _pins(path: Path) -> list[tuple[str, str]]:
    if not path.is_file():
        # is_file follows links and is False for a FIFO or a device, which would block or never end.
        what = "is not a regular file" if path.exists() else "does not exist"
        raise UsageError(f"requirements file {path} {what}")
    _check_line_lengths(path)
    try:
        import pip_api

        parsed = pip_api.parse_requirements(path, include_invalid=False)
        # pip_api's own Requirement type; the same text as packaging's.
        reqs = [(str(r), Requirement(str(r))) for r in parsed.values()]
    except Exception:
        # pip_api refuses some files pip accepts (options it does not know); fall back to PEP 508 lines.
        reqs = _parse_lines(path)
    out = []
    for text, req in reqs:
        if huge_number(text):  # packaging would turn the number into an int: a traceback, not a verdict
            raise UsageError(f"{path}: {short(redact_text(text))} holds a number no version has")
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
            raise UsageError(f"{path}: {redact_text(text)!r} is not pinned; compat needs name==version for every line")
        out.append((req.name, specs[0].version))
    return out


MAX_REQUIREMENT_LINE = 64 * 1024
"""Characters one requirements line may have: a real one (markers, hashes) is a few hundred, and
the parsers' time grows faster than the line."""


def _check_line_lengths(path: Path) -> None:
    try:
        with path.open("rb") as f:
            for n, line in enumerate(iter(lambda: f.readline(MAX_REQUIREMENT_LINE + 2), b""), start=1):
                if len(line.rstrip(b"\r\n")) > MAX_REQUIREMENT_LINE:
                    raise UsageError(f"{path}:{n}: a line longer than {MAX_REQUIREMENT_LINE} characters is not a requirement")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _parse_lines(path: Path) -> list[tuple[str, Requirement]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    out = []
    for n, raw in enumerate(lines, start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or line.startswith("-"):
            continue  # comments and pip options (--index-url, -c) say nothing about pins
        try:
            out.append((line, Requirement(line)))
        except InvalidRequirement as exc:
            raise UsageError(f"{path}:{n}: {line!r} is not a requirement: {exc}") from exc
    return out


def _requires_of(matrix: Matrix | None, name: str, version: str) -> tuple[str, ...]:
    if matrix is None:
        return ()
    releases = matrix.releases.get(name)
    if releases is None:
        return ()
    from packaging.version import InvalidVersion, Version

    try:
        wanted = Version(version)
    except InvalidVersion:
        return ()
    for release in releases.releases:
        if release.version == wanted:
            return tuple(str(r) for r in (release.requires or ()))
    return ()
