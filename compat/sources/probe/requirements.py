"""Packages from a requirements file (`-r`): each line must pin `name==version`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from compat.errors import UsageError
from compat.model.facts import Distribution
from compat.redact import redact_text

if TYPE_CHECKING:
    from compat.matrix import Matrix


def read_requirements(path: Path, matrix: Matrix | None) -> tuple[Distribution, ...]:
    """Pinned distributions, sorted by name; raises UsageError on an unpinned or bad line."""
    pins = _pins(path)
    dists = {}
    for name, version, _ in pins:
        key = str(canonicalize_name(name))
        dists[key] = Distribution(name=key, version=version, requires=_requires_of(matrix, key, version), installer=None)
    return tuple(dists[k] for k in sorted(dists))


def read_requested(path: Path) -> tuple[str, ...]:
    """The lines that ask for extras by name, as `name[extra,...]` sorted (`trl[vllm]==0.15.2` gives `trl[vllm]`):
    the one record of which extras were wanted, since installed metadata keeps none."""
    lines = {f"{canonicalize_name(name)}[{','.join(sorted(str(canonicalize_name(e)) for e in extras))}]"  # PEP 685
             for name, _, extras in _pins(path) if extras}
    return tuple(sorted(lines))


def _pins(path: Path) -> list[tuple[str, str, frozenset[str]]]:
    if not path.is_file():
        # is_file follows links and is False for a FIFO or a device, which would block or never end.
        what = "is not a regular file" if path.exists() else "does not exist"
        raise UsageError(f"requirements file {path} {what}")
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
        specs = list(req.specifier)
        if len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
            raise UsageError(f"{path}: {redact_text(text)!r} is not pinned; compat needs name==version for every line")
        out.append((req.name, specs[0].version, frozenset(req.extras)))
    return out


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
