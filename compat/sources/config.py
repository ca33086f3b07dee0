"""The project's config file: `[tool.compat]` in pyproject.toml, or compat.toml, found upward.

Searching starts in the working directory and climbs to the filesystem root; in each directory
compat.toml wins over pyproject.toml, and a pyproject.toml without `[tool.compat]` is passed over.
Errors name the file and the key, on one line.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from compat.errors import UsageError
from compat.model.config import Config, Ignore
from compat.model.findings import Severity
from compat.regular_file import MIB, decode_text, read_regular
from compat.toml_text import TomlError, parse_toml

_KEYS = {"gpus", "driver", "launcher", "fail-on", "strict", "ignore", "report-url"}
_IGNORE_KEYS = {"id", "reason", "until"}
MAX_BYTES = 16 * MIB
"""A config file is a few lines; a pyproject.toml past this is not one to read."""


def find_config(start: Path | None = None) -> Path | None:
    """The nearest compat.toml, or pyproject.toml with a `[tool.compat]` table, from `start` upward."""
    cwd = Path.cwd().resolve()
    here = (start or cwd).resolve()
    for directory in (here, *here.parents):
        own = directory / "compat.toml"
        if own.is_file():
            return _shown(own, cwd)
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _table(pyproject, _parse(pyproject)) is not None:
            return _shown(pyproject, cwd)
    return None


def _shown(path: Path, cwd: Path) -> Path:
    """Relative to the working directory when inside it: CI annotations name files from the checkout's root."""
    try:
        return path.relative_to(cwd)
    except ValueError:
        return path


def load_config(path: Path) -> Config:
    """Read and check a config file; raises UsageError naming the file and the key."""
    table = _table(path, _parse(path))
    return _config(path, table or {})


def _parse(path: Path) -> dict[str, Any]:
    try:
        # read_regular: a FIFO named by --config would block a plain read forever
        return parse_toml(decode_text(read_regular(path, limit=MAX_BYTES)))  # by its mark or NULs, as -r and --facts
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    except TomlError as exc:
        raise UsageError(f"{path}: not TOML: {exc}") from exc

def _table(path: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    if path.name != "pyproject.toml":
        return doc
    tool = doc.get("tool")
    found = tool.get("compat") if isinstance(tool, dict) else None
    if found is not None and not isinstance(found, dict):
        raise UsageError(f"{path}: tool.compat: expected a table")
    return found


def _config(path: Path, t: dict[str, Any]) -> Config:
    where = "tool.compat." if path.name == "pyproject.toml" else ""
    unknown = sorted(set(t) - _KEYS)
    if unknown:
        raise UsageError(f"{path}: {where}{unknown[0]}: unknown key (known: {', '.join(sorted(_KEYS))})")

    def text(key: str) -> str | None:
        value = t.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"{path}: {where}{key}: expected a string")
        return value

    fail_on = text("fail-on")
    if fail_on is not None and fail_on not in {s.value for s in Severity}:
        raise UsageError(f"{path}: {where}fail-on: {fail_on!r} is not one of error, warning, info")
    strict = t.get("strict", False)
    if not isinstance(strict, bool):
        raise UsageError(f"{path}: {where}strict: expected true or false")
    entries = t.get("ignore", [])
    if not isinstance(entries, list):
        raise UsageError(f"{path}: {where}ignore: expected a list of tables")
    return Config(
        path=str(path),
        gpus=text("gpus"),
        driver=text("driver"),
        launcher=text("launcher"),
        fail_on=Severity(fail_on) if fail_on else None,
        strict=strict,
        ignore=tuple(_ignore(f"{path}: {where}ignore[{i}]", e) for i, e in enumerate(entries)),
        report_url=text("report-url"),
    )


def _ignore(where: str, entry: object) -> Ignore:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected a table {{ id = ..., reason = ... }}")
    unknown = sorted(set(entry) - _IGNORE_KEYS)
    if unknown:
        raise UsageError(f"{where}.{unknown[0]}: unknown key (known: id, reason, until)")
    for key in ("id", "reason"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise UsageError(f"{where}.{key}: required, a non-empty string")
    until = entry.get("until")
    if isinstance(until, str):
        try:
            until = date.fromisoformat(until)
        except ValueError as exc:
            raise UsageError(f"{where}.until: {until!r} is not a date (YYYY-MM-DD)") from exc
    elif until is not None and (not isinstance(until, date) or hasattr(until, "hour")):
        raise UsageError(f"{where}.until: expected a date (YYYY-MM-DD)")
    return Ignore(id=entry["id"], reason=entry["reason"], until=until)
