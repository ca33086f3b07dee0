"""A release's keys from its modules: `combine` joins the `ModuleInfo` of every module of one release
(compat/timeline/extract.py) into its key sets (see compat.timeline.index for the keys). Names follow
re-exports (from-imports, lazy structures, `__getattr__` tables) so that a callable's parameters are
keyed under the shortest public module that exposes it.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from compat.timeline.extract import PUBLIC_NAME, ClassInfo, ModuleInfo, absolute_module
from compat.timeline.records import ApiKind


@dataclass
class ReleaseApi:
    """A release's keys by kind and its import edges ("module target name-or-* kind")."""

    keys: dict[ApiKind, set[str]] = field(default_factory=lambda: {k: set() for k in ApiKind})
    imports: set[str] = field(default_factory=set)


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


class _Release:
    def __init__(self, modules: Mapping[str, ModuleInfo]) -> None:
        self.modules = modules
        self._names: dict[str, dict[str, tuple[str, str] | None]] = {}
        self._children: dict[str, list[str]] = {}
        self._defs: dict[str, frozenset[str]] = {}
        for name in modules:
            parent, _, _ = name.rpartition(".")
            if parent:
                self._children.setdefault(parent, []).append(name)

    def names(self, module: str, depth: int = 0) -> dict[str, tuple[str, str] | None]:
        """Public names of a module -> where they come from ((module, name) in this release, else None)."""
        cached = self._names.get(module)
        if cached is not None:
            return cached
        info = self.modules.get(module)
        out: dict[str, tuple[str, str] | None] = {}
        if info is None or depth > 12:
            return out
        self._names[module] = out  # breaks import cycles: a cycle sees the names found so far
        for name in info.defined:
            out[name] = (module, name)
        self._imported(module, info, depth, out)
        for sub, name in info.lazy:
            out.setdefault(name, (f"{module}.{sub}" if sub else module, name))
        self._dynamic(module, info, depth, out)
        for name in info.all_names or ():
            out.setdefault(name, None)
        public = {n: o for n, o in out.items() if PUBLIC_NAME.match(n)}
        out.clear()
        out.update(public)
        return out

    def _imported(self, module: str, info: ModuleInfo, depth: int, out: dict[str, tuple[str, str] | None]) -> None:
        """The names a module binds by from-imports (star imports of the same top package included)."""
        top = module.split(".")[0]
        is_package = any(c for c in self._children.get(module, ()))
        for bound, source, original in info.from_imports:
            if bound == "*":
                if source.split(".")[0] == top:
                    source_info = self.modules.get(source)
                    exported = source_info.all_names if source_info is not None else None
                    for name, origin in self.names(source, depth + 1).items():
                        if exported is None or name in exported:
                            out.setdefault(name, origin)
                continue
            if source.split(".")[0] == top:
                out[bound] = (source, original) if f"{source}.{original}" not in self.modules else None
            elif is_package or (info.all_names and bound in info.all_names):
                out[bound] = None

    def _dynamic(self, module: str, info: ModuleInfo, depth: int, out: dict[str, tuple[str, str] | None]) -> None:
        """The names a module resolves at run time: its `__getattr__` table and `define_import_structure`."""
        for name, where in info.getattr_names:
            if where and ":" in where:
                target, _, attr = where.partition(":")
                absolute = absolute_module(module, True, len(target) - len(target.lstrip(".")), target.lstrip(".") or None)
                out.setdefault(name, (absolute, attr) if absolute else None)
            else:
                out.setdefault(name, None)
        for folder in info.define_structure:
            for name, origin in self.structure(f"{module}.{folder}" if folder else module, depth).items():
                out.setdefault(name, origin)

    def _callables(self, module: str, info: ModuleInfo) -> frozenset[str]:
        found = self._defs.get(module)
        if found is None:
            found = self._defs[module] = frozenset(n for n, _ in info.functions) | frozenset(n for n, _ in info.classes)
        return found

    def structure(self, package: str, depth: int) -> dict[str, tuple[str, str] | None]:
        """What `define_import_structure` finds below a package: each module's `__all__`, recursively."""
        out: dict[str, tuple[str, str] | None] = {}
        for child in self._children.get(package, ()):
            if self._children.get(child):
                names = self.names(child, depth + 1) if child != package else {}
                for name in names:
                    out.setdefault(name, (child, name))
            else:
                for name in self.modules[child].all_names or ():
                    out.setdefault(name, (child, name))
        return out

    def origin(self, module: str, name: str) -> tuple[str, str] | None:
        """The module and name that define what `module.name` is, within this release."""
        seen = set()
        current: tuple[str, str] | None = (module, name)
        while current is not None and current not in seen:
            seen.add(current)
            mod, attr = current
            info = self.modules.get(mod)
            if info is None:
                return None
            if attr in self._callables(mod, info):
                return current
            current = self.names(mod).get(attr)
        return None


def _transformers_model_types(info: ModuleInfo) -> Iterator[str]:
    if ".models." in info.module:
        yield from info.model_types
    for name, keys in info.tables:
        if name in ("CONFIG_MAPPING_NAMES", "CONFIG_MAPPING"):
            yield from keys


def _vllm_model_types(info: ModuleInfo) -> Iterator[str]:
    if info.module.startswith("vllm.model_executor"):
        for name, keys in info.tables:
            if re.fullmatch(r"_\w*MODELS\w*|_MODEL_REGISTRY", name):
                yield from (k for k in keys if re.fullmatch(r"[A-Z]\w*", k))


def _peft_model_types(info: ModuleInfo) -> Iterator[str]:
    for name, keys in info.tables:
        if re.fullmatch(r"TRANSFORMERS_MODELS_TO_\w+_MAPPING", name):
            yield from keys


def _liger_model_types(info: ModuleInfo) -> Iterator[str]:
    for name, keys in info.tables:
        if name == "MODEL_TYPE_TO_APPLY_LIGER_FN":
            yield from keys


# the tables in which each package lists the model types it supports
_MODEL_TYPES_OF: dict[str, Callable[[ModuleInfo], Iterator[str]]] = {
    "transformers": _transformers_model_types,
    "vllm": _vllm_model_types,
    "peft": _peft_model_types,
    "liger-kernel": _liger_model_types,
}


def _table_keys(modules: Mapping[str, ModuleInfo], package: str) -> set[str]:
    model_types = _MODEL_TYPES_OF.get(package)
    if model_types is None:
        return set()
    return {k for info in modules.values() for k in model_types(info) if re.fullmatch(r"[\w.-]+", k)}


def _scripts(entry_points: str | None) -> dict[str, str]:
    if not entry_points:
        return {}
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(entry_points)
    except configparser.Error:
        return {}
    if not parser.has_section("console_scripts"):
        return {}
    return {k.strip(): v.split(":")[0].strip() for k, v in parser.items("console_scripts")}


def combine(
    package: str,
    modules: Mapping[str, ModuleInfo],
    *,
    entry_points: str | None = None,
    scripts: Iterable[str] = (),
    own: Iterable[str] = (),
    tracked_roots: Iterable[str] = (),
    params: bool = True,
) -> ReleaseApi:
    """A release's keys from its modules.

    `own`: the package's import names; `tracked_roots`: the import names of every tracked package
    (imports of the others become edges); `scripts`: names of the wheel's plain scripts;
    `params`: whether to key parameters (off for torch, whose public callables are mostly native).
    """
    out = ReleaseApi()
    release = _Release(modules)
    own_roots = set(own)
    others = set(tracked_roots) - own_roots
    out.keys[ApiKind.MODULE] = set(modules)
    out.keys[ApiKind.NAME], exposers = _names(release, params=params)
    if params:
        out.keys[ApiKind.PARAM] = _param_keys(release, exposers)
        members = _member_keys(release, exposers)
        for kind in (ApiKind.MEMBER, ApiKind.BASE, ApiKind.SIGNATURE):
            out.keys[kind] = members[kind]
    for info in modules.values():
        for imp in info.imports:
            if imp.target.split(".")[0] in others:
                out.imports.add(f"{info.module} {imp.target} {imp.name or '*'} {imp.kind.value}")
    out.keys[ApiKind.CLI] = _cli_keys(package, modules, entry_points=entry_points, scripts=scripts, own_roots=own_roots)
    out.keys[ApiKind.MODEL_TYPE] = _table_keys(modules, package)
    return out


def _names(release: _Release, *, params: bool) -> tuple[set[str], dict[tuple[str, str], tuple[int, str, str]]]:
    """Every "module:name" key, and (with `params`) where each callable is exposed: its defining
    (module, name) -> the rank (depth, module, name) of the shortest public module that exposes it."""
    keys: set[str] = set()
    exposers: dict[tuple[str, str], tuple[int, str, str]] = {}
    for module in sorted(release.modules):
        names = release.names(module)
        for name in names:
            keys.add(f"{module}:{name}")
        if not params or _private(module):
            continue
        for name in names:
            origin = release.origin(module, name)
            if origin is None:
                continue
            rank = (module.count("."), module, name)
            if origin not in exposers or rank < exposers[origin]:
                exposers[origin] = rank
    return keys, exposers


def _param_keys(release: _Release, exposers: Mapping[tuple[str, str], tuple[int, str, str]]) -> set[str]:
    keys: set[str] = set()
    for module, info in release.modules.items():
        functions = dict(info.functions)
        classes = dict(info.classes)
        for name in (*functions, *classes):
            if not PUBLIC_NAME.match(name):
                continue
            if (module, name) not in exposers and _private(module):
                continue
            _, where, alias = exposers.get((module, name), (0, module, name))
            prefix = f"{where}:{alias}"
            if name in functions:
                keys.update(f"{prefix}({p})" for p in functions[name])
                continue
            cls = classes[name]
            keys.update(f"{prefix}({p})" for p in _init_params(release, module, cls))
            for method, method_params in cls.methods:
                keys.update(f"{prefix}.{method}({p})" for p in method_params)
    return keys


def _member_keys(release: _Release, exposers: Mapping[tuple[str, str], tuple[int, str, str]]) -> dict[ApiKind, set[str]]:
    """The own members and bases of each class, and the signature of each callable, that the package
    exports at its top level (`transformers:Trainer`), keyed like parameters. Only those: the classes
    of public submodules (every model's attention and MLP layers) would triple transformers' index,
    and drift looks callees up at the top level."""
    out: dict[ApiKind, set[str]] = {ApiKind.MEMBER: set(), ApiKind.BASE: set(), ApiKind.SIGNATURE: set()}

    def prefix(module: str, name: str) -> str:
        _, where, alias = exposers.get((module, name), (0, module, name))
        return f"{where}:{alias}"

    def keyed(module: str, name: str) -> bool:
        return bool(PUBLIC_NAME.match(name)) and "." not in prefix(module, name).partition(":")[0]

    for module, info in release.modules.items():
        public = [name for name in (*(n for n, _ in info.functions), *(n for n, _ in info.classes)) if keyed(module, name)]
        signatures = dict(info.signatures)
        classes = dict(info.classes)
        for name in public:
            key = prefix(module, name)
            if name not in classes:
                if name in signatures:
                    out[ApiKind.SIGNATURE].add(f"{key}[{signatures[name]}]")
                continue
            cls = classes[name]
            out[ApiKind.MEMBER].update(f"{key}.{m}" for m in cls.members)
            for method, sig in cls.signatures:
                out[ApiKind.SIGNATURE].add(f"{key}[{sig}]" if method == "__init__" else f"{key}.{method}[{sig}]")
            for base in cls.bases:
                found = _resolve_origin(release, module, base)
                if found is not None and keyed(*found):
                    out[ApiKind.BASE].add(f"{key}<{prefix(*found)}")
                elif found is not None:  # not exported at the top: its members are not keyed, so it stays unresolved
                    out[ApiKind.BASE].add(f"{key}<{prefix(*found).replace(':', '.')}")
                elif base not in _NO_MEMBERS and re.fullmatch(r"[A-Za-z_][\w.]*", base):
                    out[ApiKind.BASE].add(f"{key}<{base}")
    return out


_NO_MEMBERS = frozenset({"object", "Generic", "ABC", "abc.ABC", "typing.Generic", "Protocol", "typing.Protocol"})
"""Bases that give a class no public member worth recording."""


def _cli_keys(
    package: str, modules: Mapping[str, ModuleInfo], *, entry_points: str | None, scripts: Iterable[str], own_roots: set[str],
) -> set[str]:
    """Console scripts, plain scripts, and "script subcommand" for the subcommands found below a script's module."""
    console = _scripts(entry_points)
    keys = set(console)
    keys.update(s for s in scripts if re.fullmatch(r"[\w.-]+", s))
    homes = {script: target.rpartition(".")[0] or target for script, target in console.items()}
    for info in modules.values():
        if not info.subcommands:
            continue
        # the script whose entry module's package holds this module most closely
        holders = [s for s, h in homes.items() if info.module == h or info.module.startswith(h + ".")]
        if not holders:
            continue
        closest = max(len(homes[s]) for s in holders)
        holders = [s for s in holders if len(homes[s]) == closest]
        preferred = [s for s in holders if s == package or s in own_roots or s == f"{package}-cli"]
        for script in preferred or holders:
            keys.update(f"{script} {sub}" for sub in info.subcommands if re.fullmatch(r"[\w.:-]+", sub))
    return keys


def _init_params(release: _Release, module: str, cls: ClassInfo, depth: int = 0) -> tuple[str, ...]:
    """`__init__` parameters: its own, a dataclass's fields (with inherited ones), else a base's; "**" when unknowable."""
    if cls.init is not None:
        return cls.init
    inherited: list[str] = []
    for base in cls.bases:
        found = _resolve_class(release, module, base)
        if found is None:
            if base not in ("object", "Generic", "ABC", "abc.ABC", "typing.Generic", "Enum", "enum.Enum"):
                inherited.append("**")
            continue
        if depth < 8:
            inherited.extend(_init_params(release, found[0], found[1], depth + 1))
        if not cls.dataclass:
            break
    if cls.dataclass:
        return tuple(dict.fromkeys([*inherited, *cls.fields]))
    return tuple(dict.fromkeys(inherited))


def _resolve_class(release: _Release, module: str, base: str) -> tuple[str, ClassInfo] | None:
    origin = _resolve_origin(release, module, base)
    if origin is None:
        return None
    found = dict(release.modules[origin[0]].classes).get(origin[1])
    return (origin[0], found) if found is not None else None


def _resolve_origin(release: _Release, module: str, base: str) -> tuple[str, str] | None:
    """The (module, name) of this release that defines the class `base` as `module` spells it."""
    head, _, rest = base.partition(".")
    info = release.modules.get(module)
    if info is None:
        return None
    origin: tuple[str, str] | None
    if rest:
        # module alias then attribute ("models.Base"): only for from-imported modules of the release
        source = next((f"{s}.{o}" for b, s, o in info.from_imports if b == head), None)
        origin = release.origin(source, rest) if source and source in release.modules else None
    else:
        origin = release.origin(module, head)
    if origin is None or origin[1] not in dict(release.modules[origin[0]].classes):
        return None
    return origin


__all__ = ["ReleaseApi", "combine"]
