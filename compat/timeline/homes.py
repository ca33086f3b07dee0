"""Where a name lives in the API index: the distribution an import name belongs to, the indexed packages that export a
name at their top level, and the module of a package that holds a callable written by its path or by its name alone."""

from __future__ import annotations

import bisect
import functools
import re
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


def callee_home(qual: str, caller: str | None, source: ApiSource, param: str | None = None) -> tuple[PackageApi, str, str] | None:
    """(index, module, qualname in it) of a callable no indexed package exposes at its top level: one written with its
    module path (`deepspeed.zero.Init(...)`, `peft.tuners.lora.model.get_peft_model(...)` on the call's line), a class
    of a module inside a package (`DeepSpeedZeRoOffload.get_param_coordinator()`), or a function named alone whose name
    is distinctive (three words or more: `get_peft_model`). Only the packages the question points at
    are read: the one the path starts with; for a class named alone the caller's and those whose name the class
    carries (DeepSpeed...); for a function named alone every indexed package, and it must be in exactly one. The
    module chosen has the callable in some release, nearest the path written: a name re-exported by several modules is
    one callable. A class's method named alone that the hinted packages do not hold (`LlamaAttention.forward() got an unexpected keyword
    argument 'position_embeddings'`, pasted without frames) is looked for in every indexed package by its parameter
    `param` (`_class_alone`)."""
    parts = qual.split(".")
    at = next((i for i, part in enumerate(parts) if part[:1].isupper()), None)
    if len(parts) > 1 and (at is None or at > 0):  # a module path: the package it starts with
        package = distribution_of(parts[0])
        packages = [package] if package in source.indexed() else []
        at = len(parts) - 1 if at is None else at
    elif at == 0:  # a class named alone
        hinted = [distribution_of(caller)] if caller else []
        hinted += [p for p in source.indexed() if any(n.replace("_", "") in parts[0].lower() for n in import_names(p) if len(n) > 3)]
        packages = [p for p in dict.fromkeys(hinted) if p in source.indexed()]
    elif _DISTINCTIVE.fullmatch(qual):  # a function named alone: the one package whose index has its parameters
        packages = [p for p in source.indexed() if not isinstance(api := source.get(p), Unknown)
                    and any(_has_params(api, f"{m}:{qual}(") for m in _homes_of(api).get(qual, ()))]
        if len(packages) != 1:  # another package's import of it has none of its own
            return None
        at = 0
    else:
        return None
    name, rest, written = parts[at], ".".join(parts[at:]), ".".join(parts[:at])
    for package in packages:
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        # The module nearest the path written (`deepspeed.zero` -> deepspeed.runtime.zero, not deepspeed.linear): most
        # parts shared, then the shortest (the package's own re-export before the file that defines it).
        near = set(written.split("."))
        for module in sorted(_homes_of(api).get(name, ()), key=lambda m: (-len(near.intersection(m.split("."))), m.count("."), m)):
            if signatures_of(api, f"{module}:{rest}") or _has_params(api, f"{module}:{rest}("):
                return api, module, rest
    if at == 0 and len(parts) > 1 and param is not None:
        return _class_alone(name, rest, param, source)
    return None


_DISTINCTIVE = re.compile(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}")
"""A function name of three words or more (`apply_rotary_pos_emb`, `get_peft_model`): a program's own
`format_reward` or `collate_fn` is not looked for in the packages."""


def _homes_of(api: PackageApi) -> dict[str, tuple[str, ...]]:
    return api.derived("homes", functools.partial(_homes, api))


def _homes(api: PackageApi) -> dict[str, tuple[str, ...]]:
    """Each name of the index with the modules that define or re-export it in any release."""
    homes: dict[str, list[str]] = {}
    for key in api.keys(ApiKind.NAME):
        module, _, name = key.partition(":")
        homes.setdefault(name, []).append(module)
    return {name: tuple(modules) for name, modules in homes.items()}


def _has_params(api: PackageApi, head: str) -> bool:
    keys = api.keys(ApiKind.PARAM)
    i = bisect.bisect_left(keys, head)
    return i < len(keys) and keys[i].startswith(head)


def _class_alone(name: str, rest: str, param: str, source: ApiSource) -> tuple[PackageApi, str, str] | None:
    """(index, module, qualname) of a class's method that takes `param` in some release of exactly one indexed package:
    one name may be several packages' classes (transformers' and vLLM's LlamaAttention), and the parameter a call
    disagrees on is what tells them apart. Within the package, the module where the parameter came first: the file that
    defines the class, not a later file that imports it (transformers' modular_*.py)."""
    found: list[tuple[PackageApi, str]] = []
    for package in source.indexed():
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        dated = [(api.releases.index(spans[0].first), module) for module in _homes_of(api).get(name, ())
                 if (spans := api.present(ApiKind.PARAM, f"{module}:{rest}({param})"))]
        if dated:
            found.append((api, min(dated)[1]))
    if len(found) != 1:
        return None
    api, module = found[0]
    return api, module, rest
