"""What one release's code defines and imports, read with `ast` from its source (never imported).

Two steps. `extract_module` reads one file into a `ModuleInfo` (its bindings, `__all__`, lazy
`_import_structure` entries, the names a module `__getattr__` answers, callables and their
parameters, imports with how they run, CLI subcommands, model-type tables); it depends only on the
file's bytes and its module name, so a refresh reuses it for an unchanged member of the next
release. `combine` (compat/timeline/combine.py) joins a release's modules into its key sets.

Chosen over griffe by measurement (docs/api-index.md): griffe builds a full object model with
docstrings and annotations for every member, several times slower on transformers, while what compat
asks for (a name, a parameter, an import and whether it is guarded) is a small part of it.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from compat.timeline.records import ImportKind

PUBLIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_TABLE_NAME = re.compile(r"MODEL|MAPPING|REGISTRY|LIGER")
_STRUCTURES = frozenset({"_import_structure", "_SUBMOD_ATTRS"})
"""Lazy tables {submodule: [names]}: transformers' `_import_structure`, huggingface_hub's `_SUBMOD_ATTRS`."""
_CALL_WORDS = (b"add_parser", b".command(", b"define_import_structure", b"submod_attrs")


@dataclass(frozen=True, kw_only=True)
class ClassInfo:
    """A class defined at module level."""

    bases: tuple[str, ...]
    """Base classes as written, dotted ("nn.Module", "TrainingArguments")."""
    dataclass: bool
    """Decorated as a dataclass: its annotated fields are `__init__` parameters."""
    fields: tuple[str, ...]
    """Annotated class attributes (dataclass fields), in order."""
    init: tuple[str, ...] | None
    """`__init__` parameters when the class defines one ("*", "**" for *args, **kwargs)."""
    methods: tuple[tuple[str, tuple[str, ...]], ...]
    """Public methods (and `__call__`) with their parameters, without self/cls."""
    members: tuple[str, ...] = ()
    """Public members the class body defines: methods, properties, class attributes, dataclass fields
    and the `self.x = ...` attributes its `__init__` sets."""
    signatures: tuple[tuple[str, str], ...] = ()
    """(method, signature) for `__init__`, `__call__` and the public methods (see `signature`)."""


@dataclass(frozen=True, kw_only=True)
class ImportInfo:
    """One imported module or name."""

    target: str
    """Absolute module imported."""
    name: str | None
    """The name taken from it; None for `import target`; "*" for a star import."""
    kind: ImportKind


@dataclass(frozen=True, kw_only=True)
class ModuleInfo:
    """What one module's source defines, re-exports and imports."""

    module: str
    defined: tuple[str, ...] = ()
    """Names bound by def, class or assignment at module level."""
    from_imports: tuple[tuple[str, str, str], ...] = ()
    """(bound name, source module, source name) of module-level `from ... import`."""
    all_names: tuple[str, ...] | None = None
    """`__all__` when it is a literal list/tuple."""
    lazy: tuple[tuple[str, str], ...] = ()
    """(relative submodule, name) from `_import_structure`."""
    define_structure: tuple[str, ...] = ()
    """Folders given to transformers' `define_import_structure` ("" for the module's own): the `__all__`
    of the modules below them are its names."""
    getattr_names: tuple[tuple[str, str], ...] = ()
    """(name, origin "module:attr" or "") answered by a module `__getattr__`."""
    functions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    signatures: tuple[tuple[str, str], ...] = ()
    """(function, signature) of the module-level functions (see `signature`)."""
    classes: tuple[tuple[str, ClassInfo], ...] = ()
    imports: tuple[ImportInfo, ...] = ()
    subcommands: tuple[str, ...] = ()
    """Literal `add_parser("x")` names, `name = "x"` of *Subcommand classes, SUPPORTED_COMMANDS entries."""
    model_types: tuple[str, ...] = ()
    """`model_type = "x"` class attributes."""
    tables: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Module-level dict literals named like a model table (MODEL, MAPPING, REGISTRY) and their str keys."""
    error: str | None = None
    """Why the source could not be parsed (the module still counts as present)."""


def absolute_module(module: str, is_package: bool, level: int, target: str | None) -> str | None:
    if level == 0:
        return target
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level - 1 > len(parts) or (level - 1 == len(parts) and not target):
        return None
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, target] if target else parts) or None


def _params(args: ast.arguments, *, method: bool) -> tuple[str, ...]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method and names:
        names = names[1:]
    names += [a.arg for a in args.kwonlyargs]
    if args.vararg:
        names.append("*")
    if args.kwarg:
        names.append("**")
    return tuple(names)


def signature(args: ast.arguments, *, method: bool) -> str:
    """A callable's parameters with their kind and whether they are required, in Python's order and
    notation, names only: "a,b=,/,c,*args,d,e=,**kwargs" (positional-only before "/", keyword-only
    after "*" (the bare marker) or "*args"; "=" marks a default). `*args` and `**kwargs` are spelled
    so whatever their names. self/cls dropped."""
    positional = [*args.posonlyargs, *args.args]
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    parts = [f"{a.arg}=" if d else a.arg for a, d in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if method and positional:
        parts.pop(0)
        if parts and parts[0] == "/":
            parts.pop(0)
    if args.vararg or args.kwonlyargs:
        parts.append("*args" if args.vararg else "*")
    parts += [f"{a.arg}=" if d is not None else a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        parts.append("**kwargs")
    return ",".join(parts)


def _self_attributes(init: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The public `self.x` an `__init__` assigns (anywhere in its body, branches included)."""
    positional = [*init.args.posonlyargs, *init.args.args]
    if not positional:
        return []
    me = positional[0].arg
    out = []
    for node in ast.walk(init):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me and PUBLIC_NAME.match(t.attr):
                    out.append(t.attr)
    return out


def _class_members(node: ast.ClassDef) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A class body's public members and its methods' signatures (`ClassInfo.members`, `.signatures`)."""
    members: dict[str, None] = {}
    signatures: dict[str, str] = {}
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if PUBLIC_NAME.match(stmt.name):
                members[stmt.name] = None
            accessor = any((_dotted(d) or "").endswith(("property", ".setter", ".getter")) for d in stmt.decorator_list)
            if (PUBLIC_NAME.match(stmt.name) or stmt.name in ("__init__", "__call__")) and not accessor:
                static = any((_dotted(d) or "") == "staticmethod" for d in stmt.decorator_list)
                signatures[stmt.name] = signature(stmt.args, method=not static)
            if stmt.name == "__init__":
                members.update(dict.fromkeys(_self_attributes(stmt)))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(t, ast.Name) and PUBLIC_NAME.match(t.id):
                        members[t.id] = None
        elif isinstance(stmt, ast.ClassDef) and PUBLIC_NAME.match(stmt.name):
            members[stmt.name] = None
    return tuple(members), tuple(signatures.items())


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Subscript):
        return _dotted(node.value)
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return None


def _strings(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out
    return None


def _dict_keys(node: ast.expr) -> list[str] | None:
    """String keys of `{...}`, `dict(...)`, `OrderedDict([(k, v), ...])`."""
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if isinstance(node, ast.Call) and node.args and (_dotted(node.func) or "").endswith(("OrderedDict", "dict")):
        arg = node.args[0]
        if isinstance(arg, ast.Dict):
            return _dict_keys(arg)
        if isinstance(arg, (ast.List, ast.Tuple)):
            return [
                e.elts[0].value
                for e in arg.elts
                if isinstance(e, ast.Tuple) and e.elts and isinstance(e.elts[0], ast.Constant) and isinstance(e.elts[0].value, str)
            ]
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (_dotted(test) or "").endswith("TYPE_CHECKING")


class _Reader:
    def __init__(self, module: str, is_package: bool, want_calls: bool = True) -> None:
        self.module = module
        self.is_package = is_package
        self.want_calls = want_calls
        """The source names add_parser, command( or define_import_structure: read its calls."""
        self.defined: dict[str, None] = {}
        self.from_imports: dict[tuple[str, str, str], None] = {}
        self.all_names: list[str] | None = None
        self.lazy: dict[tuple[str, str], None] = {}
        self.define_structure: dict[str, None] = {}
        self.getattr_names: dict[tuple[str, str], None] = {}
        self.functions: dict[str, tuple[str, ...]] = {}
        self.signatures: dict[str, str] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.imports: dict[ImportInfo, None] = {}
        self.subcommands: dict[str, None] = {}
        self.model_types: dict[str, None] = {}
        self.tables: dict[str, list[str]] = {}
        self.literals: dict[str, list[str]] = {}
        self.literal_values: dict[str, dict[str, str]] = {}

    # --- statements at module level (and in its if/try/with blocks) ---
    def body(self, stmts: Iterable[ast.stmt], kind: ImportKind) -> None:
        for stmt in stmts:
            self.statement(stmt, kind)

    def statement(self, stmt: ast.stmt, kind: ImportKind) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_(stmt, kind, bind=True)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.defined[stmt.name] = None
            self.functions[stmt.name] = _params(stmt.args, method=False)
            self.signatures[stmt.name] = signature(stmt.args, method=False)
            if stmt.name == "__getattr__":
                self.module_getattr(stmt)
            self.nested(stmt.body)
        elif isinstance(stmt, ast.ClassDef):
            self.defined[stmt.name] = None
            self.classes[stmt.name] = self.class_(stmt, kind)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(stmt)
        elif isinstance(stmt, ast.If):
            if _is_type_checking(stmt.test):
                self.body(stmt.orelse, ImportKind.GUARDED)
                return
            self.body(stmt.body, ImportKind.GUARDED)
            self.body(stmt.orelse, ImportKind.GUARDED)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            guarded = ImportKind.GUARDED if stmt.handlers else kind  # type: ignore[attr-defined]
            self.body(stmt.body, guarded)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                self.body(handler.body, ImportKind.GUARDED)
            self.body(stmt.orelse, guarded)  # type: ignore[attr-defined]
            self.body(stmt.finalbody, kind)  # type: ignore[attr-defined]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.body(stmt.body, kind)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self.body(stmt.body, ImportKind.GUARDED)
        elif isinstance(stmt, ast.Expr):
            self.expression(stmt.value)
        self.calls(stmt)

    def nested(self, stmts: list[ast.stmt]) -> None:
        """A function body: its imports are lazy; its add_parser calls still name subcommands.

        Only statements are visited (imports are statements): expressions, most of a tree, are
        walked only when the source names a call worth reading (`want_calls`).
        """
        stack = list(stmts)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.import_(stmt, ImportKind.LAZY, bind=False)
                continue
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                stack.extend(getattr(stmt, name, ()))
            if self.want_calls:
                self.calls(stmt, nested=True)

    def calls(self, stmt: ast.stmt | ast.excepthandler, *, nested: bool = False) -> None:
        if not self.want_calls:
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.Try, ast.ExceptHandler)):
            return
        if nested and hasattr(stmt, "body"):  # its body's statements are visited on their own
            for child in ast.iter_child_nodes(stmt):
                if not isinstance(child, ast.stmt):
                    for node in ast.walk(child):
                        if isinstance(node, ast.Call):
                            self.call(node)
            return
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                self.call(node)

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("add_parser", "command"):
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self.subcommands[first.value] = None
        name = _dotted(func) or ""
        for keyword in node.keywords:  # lazy_loader's attach(__name__, submod_attrs={...}) (huggingface_hub 0.8-0.9)
            if keyword.arg == "submod_attrs" and isinstance(keyword.value, ast.Dict):
                self.structure_dict(keyword.value)
        if name.endswith("define_import_structure"):
            arg = node.args[0] if node.args else None
            folder = ""
            if isinstance(arg, ast.BinOp) and isinstance(arg.right, ast.Constant) and isinstance(arg.right.value, str):
                folder = arg.right.value
            self.define_structure[folder] = None

    def expression(self, node: ast.expr) -> None:
        # _import_structure["models.x"].extend([...]) / .append("X")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("extend", "append"):
            key = self.structure_key(node.func.value)
            if key is not None and node.args:
                names = _strings(node.args[0]) if node.func.attr == "extend" else _strings(ast.List(elts=[node.args[0]]))
                for name in names or ():
                    self.lazy[(key, name)] = None
            if isinstance(node.func.value, ast.Name) and node.func.value.id == "__all__" and node.args:
                extra = _strings(node.args[0]) if node.func.attr == "extend" else _strings(ast.List(elts=[node.args[0]]))
                self.all_names = [*(self.all_names or []), *(extra or [])]

    def structure_dict(self, value: ast.Dict) -> None:
        """{submodule: [names]} of a lazy table."""
        for k, v in zip(value.keys, value.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                for item in _strings(v) or ():
                    self.lazy[(k.value, item)] = None

    @staticmethod
    def structure_key(node: ast.expr) -> str | None:
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in _STRUCTURES
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return node.slice.value
        return None

    def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        for target in targets:
            key = self.structure_key(target)
            if key is not None and value is not None:
                for name in _strings(value) or ():
                    self.lazy[(key, name)] = None
            elif isinstance(target, ast.Name):
                self.assign_name(target.id, value, augmented=isinstance(stmt, ast.AugAssign))

    def assign_name(self, name: str, value: ast.expr | None, *, augmented: bool) -> None:
        if augmented:
            if name == "__all__":
                self.all_names = [*(self.all_names or []), *(_strings(value) or [])]
            return
        self.defined[name] = None
        if value is None:
            return
        if name == "__all__":
            found = _strings(value)
            if found is not None:
                self.all_names = found
            elif isinstance(value, ast.BinOp):  # __all__ = [...] + [...]
                self.all_names = [s for side in (value.left, value.right) for s in (_strings(side) or [])]
        elif name in _STRUCTURES and isinstance(value, ast.Dict):
            self.structure_dict(value)
        self.literal(name, value)

    def literal(self, name: str, value: ast.expr) -> None:
        """A module-level dict's keys (and its str-to-str pairs) or a sequence of strings."""
        keys = _dict_keys(value)
        if keys is None:
            seq = _strings(value)
            if seq is not None:
                self.literals[name] = seq
                if name == "SUPPORTED_COMMANDS":
                    for sub in seq:
                        self.subcommands[sub] = None
            return
        self.literals[name] = keys
        if isinstance(value, ast.Dict):
            self.literal_values[name] = {
                k.value: v.value
                for k, v in zip(value.keys, value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
                and isinstance(v, ast.Constant) and isinstance(v.value, str)
            }
        if _TABLE_NAME.search(name):
            self.tables[name] = keys

    def import_(self, stmt: ast.Import | ast.ImportFrom, kind: ImportKind, *, bind: bool) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self.imports[ImportInfo(target=alias.name, name=None, kind=kind)] = None
            return
        source = absolute_module(self.module, self.is_package, stmt.level, stmt.module)
        if source is None:
            return
        for alias in stmt.names:
            self.imports[ImportInfo(target=source, name=alias.name, kind=kind)] = None
            if bind and alias.name != "*":
                self.from_imports[(alias.asname or alias.name, source, alias.name)] = None
            elif bind:
                self.from_imports[("*", source, "*")] = None

    def module_getattr(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if not func.args.args:
            return
        param = func.args.args[0].arg
        for node in ast.walk(func):
            if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == param):
                continue
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                    self.getattr_names[(right.value, "")] = None
                elif isinstance(op, ast.In):
                    if isinstance(right, ast.Name):
                        values = self.literal_values.get(right.id, {})
                        for name in self.literals.get(right.id, ()):
                            self.getattr_names[(name, values.get(name, ""))] = None
                    else:
                        for name in _strings(right) or _dict_keys(right) or ():
                            self.getattr_names[(name, "")] = None

    def class_(self, node: ast.ClassDef, kind: ImportKind) -> ClassInfo:
        decorators = [_dotted(d) or "" for d in node.decorator_list]
        is_dataclass = any(d.rsplit(".", 1)[-1] == "dataclass" for d in decorators)
        bases = tuple(b for b in (_dotted(b) for b in node.bases) if b)
        fields: list[str] = []
        init: tuple[str, ...] | None = None
        methods: list[tuple[str, tuple[str, ...]]] = []
        subcommand = any("Subcommand" in b for b in bases)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                annotation = _dotted(stmt.annotation) or ""
                init_false = (
                    isinstance(stmt.value, ast.Call)
                    and (_dotted(stmt.value.func) or "").endswith("field")
                    and any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in stmt.value.keywords)
                )
                if not annotation.endswith("ClassVar") and not init_false:
                    fields.append(stmt.target.id)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                static = any((_dotted(d) or "") == "staticmethod" for d in stmt.decorator_list)
                params = _params(stmt.args, method=not static)
                if stmt.name == "__init__":
                    init = params
                elif PUBLIC_NAME.match(stmt.name) or stmt.name == "__call__":
                    methods.append((stmt.name, params))
                self.nested(stmt.body)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if not (isinstance(target, ast.Name) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                        continue
                    if target.id == "model_type" and stmt.value.value:
                        self.model_types[stmt.value.value] = None
                    elif target.id == "name" and subcommand:
                        self.subcommands[stmt.value.value] = None
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.import_(stmt, kind, bind=False)
            else:
                for sub in ast.walk(stmt):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        self.import_(sub, ImportKind.GUARDED, bind=False)
        members, signatures = _class_members(node)
        return ClassInfo(bases=bases, dataclass=is_dataclass, fields=tuple(fields), init=init, methods=tuple(methods),
                         members=members, signatures=signatures)

    def info(self) -> ModuleInfo:
        return ModuleInfo(
            module=self.module,
            defined=tuple(self.defined),
            from_imports=tuple(self.from_imports),
            all_names=tuple(self.all_names) if self.all_names is not None else None,
            lazy=tuple(self.lazy),
            define_structure=tuple(self.define_structure),
            getattr_names=tuple(self.getattr_names),
            functions=tuple(self.functions.items()),
            signatures=tuple(self.signatures.items()),
            classes=tuple(self.classes.items()),
            imports=tuple(self.imports),
            subcommands=tuple(self.subcommands),
            model_types=tuple(self.model_types),
            tables=tuple((k, tuple(v)) for k, v in self.tables.items()),
        )


def module_name(path: str) -> tuple[str, bool] | None:
    """("pkg.sub.mod", is_package) for a member path "pkg/sub/mod.py"; None when it is no module."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), is_package


def extract_module(source: bytes, module: str, is_package: bool) -> ModuleInfo:
    """One module's facts; a file that does not parse yields only its name and the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in old releases
            tree = ast.parse(source, filename=module)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ModuleInfo(module=module, error=f"{type(exc).__name__}: {exc}"[:200])
    reader = _Reader(module, is_package, want_calls=any(word in source for word in _CALL_WORDS))
    reader.body(tree.body, ImportKind.TOP_LEVEL)
    return reader.info()


__all__ = ["PUBLIC_NAME", "ClassInfo", "ImportInfo", "ModuleInfo", "absolute_module", "extract_module", "module_name"]
