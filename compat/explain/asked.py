"""Which packages a log asks the API timeline about that the shipped index lacks: the module an import,
attribute or module error names (`cannot import name 'X' from 'pkgz'`), else, for an argument or member
error, the installed package whose frame raised it. explain indexes them on demand
(compat/timeline/ondemand.py) before it answers.

Never the standard library, a private module or the user's own code (a module the message places outside
site-packages): their names are not packages an index serves.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from compat.explain.drift import question
from compat.explain.roots import ErrorDraft, Raised
from compat.explain.versions import stated_versions
from compat.model.unknown import Unknown
from compat.timeline.homes import distribution_of
from compat.timeline.records import ApiKind, ApiQuestion, ApiWanted, Missing

if TYPE_CHECKING:
    from compat.model.facts import Facts

_NAMED = (Missing.IMPORT_NAME, Missing.ATTRIBUTE, Missing.MODULE)
_CALLED = (Missing.KEYWORD, Missing.POSITIONAL, Missing.POSITIONAL_COUNT, Missing.MEMBER)
_PLACED = re.compile(r"cannot import name '\w+' from '[\w.]+' \(([^)]*)\)")
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__main__", "builtins"}


def _outside_packages(raised: Raised) -> bool:
    """Whether the message places the module in a file outside site-packages (the user's own code)."""
    m = _PLACED.search(raised.message)
    if m is None or ("/" not in m.group(1) and "\\" not in m.group(1)):
        return False
    return "site-packages" not in m.group(1) and "dist-packages" not in m.group(1)


def _roots(raised: Raised, q: ApiQuestion) -> tuple[tuple[str, tuple[tuple[ApiKind, str], ...]], ...]:
    """(import root, keys asked) of the packages the question needs the timeline of."""
    if q.missing in _NAMED and q.module is not None:
        if _outside_packages(raised):
            return ()
        key = (ApiKind.MODULE, q.module) if q.missing is Missing.MODULE else (ApiKind.NAME, f"{q.module}:{q.name}")
        return ((q.module.split(".")[0], (key,)),)
    inner = raised.innermost
    if q.missing in _CALLED and inner is not None and inner.package:
        return ((inner.package.split(".")[0], ()),)
    return ()


def _servable(root: str) -> bool:
    return root.isidentifier() and not root.startswith("_") and root not in _STDLIB


def asked(drafts: Iterable[ErrorDraft], indexed: Collection[str], facts: Facts | None = None) -> tuple[ApiWanted, ...]:
    """The packages outside `indexed` (distribution names) whose timeline the log's errors ask for, in
    the order the log asks, each with the versions the log states or the facts give and the keys asked."""
    found: dict[str, tuple[list[str], list[tuple[ApiKind, str]]]] = {}
    for draft in drafts:
        stated = stated_versions("\n".join(f"{r.type}: {r.message}" if r.type else r.message for r in draft.chain))
        for raised in draft.chain:
            q = question(raised)
            for root, keys in _roots(raised, q) if q is not None else ():
                package = distribution_of(root)
                if not _servable(root) or package in indexed:
                    continue
                versions, asked_keys = found.setdefault(package, ([], []))
                versions += [v.found for v in stated if v.subject == package and v.found and v.found not in versions]
                asked_keys += [k for k in keys if k not in asked_keys]
    return tuple(ApiWanted(package=p, versions=tuple(_installed(facts, p, v)), keys=tuple(k)) for p, (v, k) in found.items())


def _installed(facts: Facts | None, package: str, versions: Sequence[str]) -> list[str]:
    dist = facts.package(package) if facts is not None else None
    if dist is None or isinstance(dist, Unknown):
        return list(versions)
    return [dist.public_version, *(v for v in versions if v != dist.public_version)]


__all__ = ["asked"]
