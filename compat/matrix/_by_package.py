"""A curated table's rows looked up by package name: a lock asks once for each release it weighs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, TypeVar

from compat.model.launcher import canonical


class _Row(Protocol):
    @property
    def package(self) -> str: ...


R = TypeVar("R", bound=_Row)


def index_rows(rows: Iterable[R]) -> dict[str, R]:
    """Each package's first row, by its canonical name (the loaders canonicalize it), as a table's order gives it."""
    out: dict[str, R] = {}
    for row in rows:
        out.setdefault(row.package, row)
    return out


def find_row(index: Mapping[str, R], package: str) -> R | None:
    """The row of `package`; the name canonicalized only when it is not already, the common case being a lookup."""
    found = index.get(package)
    return found if found is not None else index.get(canonical(package))
