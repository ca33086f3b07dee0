"""Where a name lives in the API index: the distribution an import name belongs to, the indexed packages that export a
name at their top level, and the module of a package that holds a class written by its path or by its name alone."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator

from packaging.utils import canonicalize_name

from compat.model.unknown import Unknown
from compat.timeline.index import TOP_LEVEL_NAMES, PackageApi, import_names, signatures_of
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiKind


def distribution_of(import_name: str) -> str:
    """The tracked distribution that installs top-level module `import_name`."""
    for dist, names in TOP_LEVEL_NAMES.items():
        if import_name in names:
            return dist
    return canonicalize_name(import_name)


def owners(head: str, caller_import: str | None, source: ApiSource) -> Iterator[tuple[PackageApi, str]]:
    """The indexed packages exposing `head` at their root, the caller's own package last (a package
    calling its own callable wrongly is a bug, not drift)."""
    caller = distribution_of(caller_import) if caller_import else None
    order = [p for p in source.indexed() if p != caller] + ([caller] if caller in source.indexed() else [])
    for package in order:
        # Two lookups per package, never a listing of every key (transformers' parameters alone are megabytes).
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        root = (api.top_level or import_names(package))[0]
        if api.present(ApiKind.NAME, f"{root}:{head}"):
            yield api, root


def class_home(qual: str, caller: str | None, source: ApiSource) -> tuple[PackageApi, str, str] | None:
    """(index, module, qualname in it) of a callable whose class no indexed package exposes at its top level: one
    written by its module path (`deepspeed.zero.Init(...)` on the call's line), or a class of a module inside a
    package (`DeepSpeedZeRoOffload.get_param_coordinator()`). Only the packages the question points at are read: the
    one the path starts with, else the caller's and those whose name the class carries (DeepSpeed...). The module
    chosen is the first that has the callable in any release: a class re-exported by several modules is one class."""
    parts = qual.split(".")
    at = next((i for i, part in enumerate(parts) if part[:1].isupper()), None)
    if at is None:
        return None
    cls, rest = parts[at], ".".join(parts[at:])
    if at:
        package = distribution_of(parts[0])
        packages = [package] if package in source.indexed() else []
        written = ".".join(parts[:at])
    else:
        hinted = [distribution_of(caller)] if caller else []
        hinted += [p for p in source.indexed() if any(n.replace("_", "") in cls.lower() for n in import_names(p) if len(n) > 3)]
        packages = [p for p in dict.fromkeys(hinted) if p in source.indexed()]
        written = ""
    for package in packages:
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        modules = api.derived("class-homes", functools.partial(_class_homes, api)).get(cls, ())
        # The module nearest the path written (`deepspeed.zero` -> deepspeed.runtime.zero, not deepspeed.linear): most
        # parts shared, then the shortest (the package's own re-export before the file that defines it).
        near = set(written.split("."))
        for module in sorted(modules, key=lambda m: (-len(near.intersection(m.split("."))), m.count("."), m)):
            if signatures_of(api, f"{module}:{rest}") or _has_params(api, f"{module}:{rest}("):
                return api, module, rest
    return None


def _class_homes(api: PackageApi) -> dict[str, tuple[str, ...]]:
    """Each class name of the index (capitalised) with the modules that define or re-export it in any release."""
    homes: dict[str, list[str]] = {}
    for key in api.keys(ApiKind.NAME):
        module, _, name = key.partition(":")
        if name[:1].isupper():
            homes.setdefault(name, []).append(module)
    return {name: tuple(modules) for name, modules in homes.items()}


def _has_params(api: PackageApi, head: str) -> bool:
    keys = api.keys(ApiKind.PARAM)
    i = bisect.bisect_left(keys, head)
    return i < len(keys) and keys[i].startswith(head)
