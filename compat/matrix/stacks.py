"""Sets that upstream projects ran together (matrix/stacks.toml): the lock's first preference.

Each stack is the pinned requirements of one project at one commit (a setup.py, a requirements
file, a Dockerfile of its images), with the source and the date of that commit. The format:

    [[stack]]
    id = "open-r1-2025-04-08"                  # lowercase words and digits joined by hyphens; unique
    project = "huggingface/open-r1"            # owner/name of the repository
    source = "huggingface/open-r1@bf08f56...:setup.py"   # owner/name@commit:path
    date = "2025-04-08"                        # the commit's date
    pins = { torch = "2.5.1", vllm = "0.7.2", trl = "0.16.0", transformers = "4.50.0" }

Only exact pins of released versions are recorded (a `git+...` requirement or a range is left
out: it names no release). Overlays add stacks; an id defined twice is an error naming both files.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.matrix._toml import Table
from compat.version_text import short

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PROJECT = re.compile(r"^[\w.-]+/[\w.-]+$")
_SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{7,40}:\S+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, kw_only=True)
class Stack:
    """One set a project pinned and ran."""

    id: str
    """Stable id ("open-r1-2025-04-08")."""
    project: str
    """The repository (owner/name)."""
    source: str
    """Where the pins are: owner/name@commit:path."""
    date: str
    """The commit's date (YYYY-MM-DD)."""
    pins: tuple[tuple[str, Version], ...]
    """(canonical name, version) of each pinned package, sorted by name."""

    @cached_property
    def _by_name(self) -> dict[str, Version]:
        return dict(self.pins)

    def version(self, package: str) -> Version | None:
        return self._by_name.get(package)


@dataclass(frozen=True, kw_only=True)
class StackTable:
    stacks: tuple[Stack, ...] = ()
    """Oldest first (by date, then id)."""

    def with_package(self, package: str) -> tuple[Stack, ...]:
        """The stacks that pin `package` (asked thousands of times per lock: answered once per name)."""
        return self._with_package.get(package, ())

    @cached_property
    def _with_package(self) -> dict[str, tuple[Stack, ...]]:
        out: dict[str, list[Stack]] = {}
        for stack in self.stacks:
            for name, _ in stack.pins:
                out.setdefault(name, []).append(stack)
        return {name: tuple(found) for name, found in out.items()}

    def with_pin(self, package: str, version: Version) -> tuple[Stack, ...]:
        """The stacks that pin `package` at `version`, oldest first (lock asks it for every candidate it ranks)."""
        return self._with_pin.get((package, version), ())

    @cached_property
    def _with_pin(self) -> dict[tuple[str, Version], tuple[Stack, ...]]:
        out: dict[tuple[str, Version], list[Stack]] = {}
        for stack in self.stacks:
            for name, version in stack.pins:
                out.setdefault((name, version), []).append(stack)
        return {key: tuple(found) for key, found in out.items()}


def load_stacks(tables: Sequence[Table]) -> StackTable:
    """Parse every stacks.toml (shipped first, overlays after); raises MatrixError naming the file and key."""
    seen: dict[str, str] = {}
    out: list[Stack] = []
    for doc in tables:
        doc.only("stack")
        for t in doc.tables("stack", ()):
            stack = _parse(t)
            if stack.id in seen:
                t.fail("id", f"{stack.id!r} is already defined in {seen[stack.id]}")
            seen[stack.id] = t.file
            out.append(stack)
    return StackTable(stacks=tuple(sorted(out, key=lambda s: (s.date, s.id))))


def _parse(t: Table) -> Stack:
    t.only("id", "project", "source", "date", "pins")
    sid = t.str("id")
    if not _ID.match(sid):
        t.fail("id", f"{sid!r}: use lowercase words and digits joined by hyphens")
    project = t.str("project")
    if not _PROJECT.match(project):
        t.fail("project", f"{project!r} is not owner/name")
    source = t.str("source")
    if not _SOURCE.match(source):
        t.fail("source", f"{source!r} is not owner/name@commit:path")
    if not source.startswith(project + "@"):
        t.fail("source", f"{source!r} is not in {project}")
    date = t.str("date")
    if not _DATE.match(date):
        t.fail("date", f"{date!r} is not a date (YYYY-MM-DD)")
    table = t.table("pins")
    if len(table.data) < 2:
        t.fail("pins", "a stack pins at least two packages (one package was not tested with anything)")
    pins = []
    for name, text in table.data.items():
        if not isinstance(text, str):
            table.fail(name, f"expected a version string, got {type(text).__name__}")
        if str(canonicalize_name(name)) != name:
            table.fail(name, f"write the canonical name {canonicalize_name(name)!r}")
        try:
            version = Version(text)
        except ValueError:  # InvalidVersion, or a number longer than int() reads
            table.fail(name, f"{short(text)} is not a version")
        if version.local is not None or version.is_prerelease or version.is_devrelease:
            table.fail(name, f"{text!r}: record released versions only, without a build tag")
        pins.append((name, version))
    return Stack(id=sid, project=project, source=source, date=date, pins=tuple(sorted(pins)))
