"""compat's own environment variables, read in one place into one frozen record.

Every other module takes what it needs (a cache directory, an index URL) as a parameter, so a
library caller decides without touching `os.environ`, and a test passes a Settings instead of
monkeypatching the process environment.

    COMPAT_CACHE_DIR   the cache directory (default: $XDG_CACHE_HOME/compat, else ~/.cache/compat)
    XDG_CACHE_HOME     the base of the default cache directory
    COMPAT_NO_CACHE    any non-empty value: read and write no cache at all
    PIP_INDEX_URL      the package index `compat matrix refresh` reads, and `compat explain` indexes a package the
                       API index lacks from (no default: compat names no registry)
    COMPAT_REPORT_URL  base URL of the finding pages (`compat matrix site`); reports link each finding id there
    COMPAT_SEARCH_SECONDS  how long `lock` and `plan` search before they stop and say so (default 20)
    COMPAT_TORCH_TIMEOUT  seconds doctor allows loading torch's libraries or importing it (default: 60, more where
                          Python starts slowly)
    COMPAT_TORCH_LOAD  1: doctor loads torch's libraries in a child even where their files settle that they load
    COMPAT_DEBUG       1: an internal error (exit 3) prints its traceback before its one line

`COMPAT_MATRIX` (overlay directories) is an option of the command line, read there by typer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compat.errors import UsageError
from compat.model.search import SEARCH_SECONDS_VARIABLE


@dataclass(frozen=True, kw_only=True)
class Settings:
    cache_dir: Path | None = None
    """Where compat keeps what it can recompute (parsed matrix files, torch reports, index metadata); None: no cache."""
    index_url: str | None = None
    """The simple-API root that `matrix refresh` reads; None until PIP_INDEX_URL or --index-url names one
    (pip.conf is not read, and compat does not guess a registry)."""
    report_url: str | None = None
    """Base URL of the pages `compat matrix site` builds; finding ids in reports link there. None: no links."""
    search_seconds: float | None = None
    """How long `lock` and `plan` may search (COMPAT_SEARCH_SECONDS); None: the default bound."""
    torch_timeout: float | None = None
    """Seconds allowed to loading torch's libraries or `import torch` when probing (COMPAT_TORCH_TIMEOUT); None: the
    bound adapts to the machine."""
    torch_load: bool = False
    """Load torch's libraries in a child even where their files settle that they load (COMPAT_TORCH_LOAD=1)."""
    debug: bool = False
    """An internal error prints its traceback (COMPAT_DEBUG=1)."""


def read_settings(environ: Mapping[str, str] | None = None, *, home: Path | None = None) -> Settings:
    """Settings from `environ` (default: this process's environment) and the user's home directory."""
    env = os.environ if environ is None else environ
    return Settings(
        cache_dir=_cache_dir(env, home),
        index_url=env.get("PIP_INDEX_URL", "").strip() or None,
        report_url=env.get("COMPAT_REPORT_URL", "").strip() or None,
        search_seconds=_seconds(env, SEARCH_SECONDS_VARIABLE),
        torch_timeout=_seconds(env, "COMPAT_TORCH_TIMEOUT"),
        torch_load=env.get("COMPAT_TORCH_LOAD", "").strip() not in ("", "0"),
        debug=env.get("COMPAT_DEBUG", "").strip() not in ("", "0"),
    )


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    """Variable `name` as a positive number of seconds up to a day; None when unset; raises UsageError naming it
    otherwise (a typo must not silently become the default)."""
    text = env.get(name, "")
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 86400:  # also false for NaN
        raise UsageError(f"{name}={text[:40]!r}: expected seconds, a number above 0 and at most 86400")
    return value


def _cache_dir(env: Mapping[str, str], home: Path | None) -> Path | None:
    if env.get("COMPAT_NO_CACHE", "").strip():
        return None
    explicit = env.get("COMPAT_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = env.get("XDG_CACHE_HOME", "").strip()
    if base:
        return Path(base) / "compat"
    return (home or Path.home()) / ".cache" / "compat"


PARSER_VARIABLES = ("COMPAT_MATRIX", "_COMPAT_COMPLETE")
"""The variables typer reads as part of the command line: --matrix's, and the shell completion's request."""


def parser_variables_set(environ: Mapping[str, str] | None = None) -> bool:
    """Whether one of PARSER_VARIABLES is set: then only typer reads the command line (compat.cli._fast_explain)."""
    env = os.environ if environ is None else environ
    return any(name in env for name in PARSER_VARIABLES)
