"""Reading curated TOML into typed values, with errors that name the file and the key.

Every loader in compat/matrix goes through `Table`, so an error in any curated file reads
like `matrix/signatures/vllm.toml: signature[3].when.gpu_count: "two" is not a specifier`.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, overload

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat.errors import MatrixError
from compat.regular_file import MIB, read_regular
from compat.toml_text import TomlError, parse_toml
from compat.version_text import short

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.requirements import Requirement

# The TOML parser and packaging's marker and requirement grammars are imported where a file is parsed: a
# compiled matrix (compat.matrix.compiled) is read back without them on every warm start.

_MISSING: Any = object()
D = TypeVar("D")
MAX_BYTES = 32 * MIB
"""The largest curated file (a releases file) is well under 1 MiB; an overlay past this is refused."""


def read_toml(path: Path, *, label: str | None = None) -> Table:
    """Parse a TOML file; a syntax error or unreadable file becomes a MatrixError."""
    name = label or str(path)
    try:
        raw = read_regular(path, limit=MAX_BYTES)
    except OSError as exc:
        raise MatrixError(name, "", f"cannot read: {exc.strerror or exc}") from exc
    try:
        data = parse_toml(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MatrixError(name, "", f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except TomlError as exc:
        raise MatrixError(name, "", f"invalid TOML: {exc}") from exc
    return Table(data, file=name, path="")


class Table:
    """A TOML table that remembers where it came from."""

    def __init__(self, data: dict[str, Any], *, file: str, path: str) -> None:
        self.data = data
        self.file = file
        self.path = path

    def key(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, message: str) -> NoReturn:
        raise MatrixError(self.file, self.key(key) if key else self.path, message)

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def only(self, *allowed: str) -> None:
        """Reject keys this schema does not know (typos must not be silently ignored)."""
        for key in self.data:
            if key not in allowed:
                self.fail(key, f"unknown key (expected one of: {', '.join(allowed)})")

    def _get(self, key: str, kind: type | tuple[type, ...], what: str, default: object) -> Any:
        if key not in self.data:
            if default is _MISSING:
                self.fail(key, "missing")
            return default
        value = self.data[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(key, f"expected {what}, got {type(value).__name__}")
        return value

    # Each getter returns its type when the key is required, or that type or the default's when one
    # is given (`t.str("advice", None)` is `str | None`): the overloads say so to mypy.

    @overload
    def str(self, key: builtins.str) -> builtins.str: ...
    @overload
    def str(self, key: builtins.str, default: None) -> builtins.str | None: ...
    @overload
    def str(self, key: builtins.str, default: D) -> builtins.str | D: ...
    def str(self, key: builtins.str, default: object = _MISSING) -> object:
        value = self._get(key, str, "a string", default)
        if key in self.data and not value.strip():
            self.fail(key, "must not be empty")
        return value

    @overload
    def int(self, key: builtins.str) -> builtins.int: ...
    @overload
    def int(self, key: builtins.str, default: None) -> builtins.int | None: ...
    @overload
    def int(self, key: builtins.str, default: D) -> builtins.int | D: ...
    def int(self, key: builtins.str, default: object = _MISSING) -> object:
        return self._get(key, int, "an integer", default)

    @overload
    def bool(self, key: builtins.str) -> builtins.bool: ...
    @overload
    def bool(self, key: builtins.str, default: None) -> builtins.bool | None: ...
    @overload
    def bool(self, key: builtins.str, default: D) -> builtins.bool | D: ...
    def bool(self, key: builtins.str, default: object = _MISSING) -> object:
        return self._get(key, bool, "true or false", default)

    @overload
    def strs(self, key: builtins.str) -> tuple[builtins.str, ...]: ...
    @overload
    def strs(self, key: builtins.str, default: None) -> tuple[builtins.str, ...] | None: ...
    @overload
    def strs(self, key: builtins.str, default: D) -> tuple[builtins.str, ...] | D: ...
    def strs(self, key: builtins.str, default: object = _MISSING) -> object:
        value = self._get(key, list, "a list of strings", default)
        if value is default:
            return default
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{key}[{i}]", f"expected a string, got {type(item).__name__}")
        return tuple(value)

    @overload
    def table(self, key: builtins.str) -> Table: ...
    @overload
    def table(self, key: builtins.str, default: None) -> Table | None: ...
    @overload
    def table(self, key: builtins.str, default: D) -> Table | D: ...
    def table(self, key: builtins.str, default: object = _MISSING) -> object:
        value = self._get(key, dict, "a table", default)
        if value is default:
            return default
        return Table(value, file=self.file, path=self.key(key))

    @overload
    def tables(self, key: builtins.str) -> tuple[Table, ...]: ...
    @overload
    def tables(self, key: builtins.str, default: None) -> tuple[Table, ...] | None: ...
    @overload
    def tables(self, key: builtins.str, default: D) -> tuple[Table, ...] | D: ...
    def tables(self, key: builtins.str, default: object = _MISSING) -> object:
        value = self._get(key, list, "an array of tables", default)
        if value is default:
            return default
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"{key}[{i}]", "expected a table")
            out.append(Table(item, file=self.file, path=f"{self.key(key)}[{i}]"))
        return tuple(out)

    @overload
    def version(self, key: builtins.str) -> Version: ...
    @overload
    def version(self, key: builtins.str, default: None) -> Version | None: ...
    @overload
    def version(self, key: builtins.str, default: D) -> Version | D: ...
    def version(self, key: builtins.str, default: object = _MISSING) -> object:
        text = self.str(key, default)
        if text is default or not isinstance(text, str):
            return default
        try:
            return Version(text)
        except (InvalidVersion, ValueError):  # ValueError: a number too long for int() (Python 3.11+)
            self.fail(key, f"{text[:60]!r} is not a version")

    def versions(self, key: builtins.str) -> tuple[Version, ...]:
        """A non-empty list of versions (the releases a curated row covers)."""
        out = []
        for i, text in enumerate(self.strs(key)):
            try:
                out.append(Version(text))
            except (InvalidVersion, ValueError):  # ValueError: a number too long for int() (Python 3.11+)
                self.fail(f"{key}[{i}]", f"{short(text)} is not a version")
        if not out:
            self.fail(key, "must name at least one release")
        return tuple(out)

    @overload
    def specifier(self, key: builtins.str) -> SpecifierSet: ...
    @overload
    def specifier(self, key: builtins.str, default: None) -> SpecifierSet | None: ...
    @overload
    def specifier(self, key: builtins.str, default: D) -> SpecifierSet | D: ...
    def specifier(self, key: builtins.str, default: object = _MISSING) -> object:
        text = self.str(key, default) if not (key in self.data and self.data[key] == "") else ""
        if text is default or not isinstance(text, str):
            return default
        return parse_specifier(text, lambda msg: self.fail(key, msg))

    @overload
    def marker(self, key: builtins.str) -> Marker: ...
    @overload
    def marker(self, key: builtins.str, default: None) -> Marker | None: ...
    @overload
    def marker(self, key: builtins.str, default: D) -> Marker | D: ...
    def marker(self, key: builtins.str, default: object = _MISSING) -> object:
        from packaging.markers import InvalidMarker, Marker

        text = self.str(key, default)
        if text is default or not isinstance(text, str):
            return default
        try:
            return Marker(text)
        except InvalidMarker as exc:
            self.fail(key, f"{text!r} is not a PEP 508 marker: {exc}")

    @overload
    def requirements(self, key: builtins.str) -> tuple[Requirement, ...]: ...
    @overload
    def requirements(self, key: builtins.str, default: None) -> tuple[Requirement, ...] | None: ...
    @overload
    def requirements(self, key: builtins.str, default: D) -> tuple[Requirement, ...] | D: ...
    def requirements(self, key: builtins.str, default: object = _MISSING) -> object:
        from packaging.requirements import InvalidRequirement, Requirement

        texts = self.strs(key, default)
        if texts is default or not isinstance(texts, tuple):
            return default
        out = []
        for i, text in enumerate(texts):
            try:
                out.append(Requirement(text))
            except InvalidRequirement as exc:
                self.fail(f"{key}[{i}]", f"{text!r} is not a PEP 508 requirement: {exc}")
        return tuple(out)

def parse_specifier(text: str, fail: Any) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        fail(f"{text!r} is not a PEP 440 specifier (e.g. '>=2.5,<2.7')")
        raise AssertionError("unreachable") from None  # fail() raises
