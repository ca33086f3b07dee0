"""Who asked the resolver for a requirement: the user, a package, the catalog or the extension table."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AskerKind(str, enum.Enum):
    TARGET = "target"  # the user, on the command line
    PACKAGE = "package"  # a release's declared requirement
    CATALOG = "catalog"  # a known failure's version fix, imposed to keep the set off it
    EXTENSION_TABLE = "extension-table"  # the torch a compiled extension's prebuilt wheels were built for
    PROBE = "probe"  # a question the resolver asks itself (lookahead, hints); never shown


@dataclass(frozen=True, kw_only=True)
class Asker:
    """Who asked for one requirement."""

    kind: AskerKind
    """Which kind of asker."""
    package: str | None = None
    """The asking package (PACKAGE, EXTENSION_TABLE), canonical name."""
    version: str | None = None
    """Its version ("0.7.2")."""
    extras: tuple[str, ...] = ()
    """The extras it was installed with, sorted ("vllm" for trl[vllm])."""
    signature: str | None = None
    """The catalog signature id (CATALOG)."""
