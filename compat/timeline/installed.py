"""The pure parse of an installed release's source files: a file's text to its syntax tree, the names the
module defines and the imports it makes (compat/sources/installed_api.py reads the files; doctor's link
check asks the result when the API index has not read that release)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from compat.model.unknown import Unknown
from compat.timeline.records import ImportEdge, ImportKind

_LAZY_MARKERS = ("_import_structure", "_LazyModule", "define_import_structure", "__getattr__", "_SUBMOD_ATTRS", "lazy_import")


def parse_module(source: bytes, filename: str) -> ast.Module | None:
    """The file's syntax tree; None when it does not parse (another Python's syntax, a null byte)."""
    try:
        return ast.parse(source, filename=filename)
    except (SyntaxError, ValueError):
        return None


def defined_names(tree: ast.Module, filename: str) -> frozenset[str] | Unknown:
    """The names a module defines at module level (inside try/if/with blocks too); Unknown when the file
    defines names lazily or star-imports them, which `ast` cannot follow."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id in _LAZY_MARKERS) or (isinstance(node, ast.FunctionDef) and node.name == "__getattr__"):
            return Unknown(reason=f"{filename} defines names lazily")
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return Unknown(reason=f"{filename} star-imports names")
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(names)


def _module_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run at import time, inside try/if/with blocks too."""
    for node in body:
        yield node
        if isinstance(node, ast.Try | ast.If | ast.With):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, block, ()):
                    yield from _module_level(child.body if isinstance(child, ast.ExceptHandler) else [child])


def module_imports(tree: ast.Module, module: str) -> Iterable[ImportEdge]:
    """Every import of `module`, with how it runs: top level, guarded (inside try/if at module level), lazy."""

    def visit(nodes: Iterable[ast.AST], kind: ImportKind) -> Iterable[ImportEdge]:
        for node in nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    yield ImportEdge(module=module, target=a.name, name=None, kind=kind)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for a in node.names:
                    yield ImportEdge(module=module, target=node.module, name=None if a.name == "*" else a.name, kind=kind)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(ast.iter_child_nodes(node), ImportKind.LAZY)
            elif isinstance(node, (ast.Try, ast.If)) and kind is ImportKind.TOP_LEVEL:
                yield from visit(ast.iter_child_nodes(node), ImportKind.GUARDED)
            else:
                yield from visit(ast.iter_child_nodes(node), kind)

    return visit(tree.body, ImportKind.TOP_LEVEL)


__all__ = ["defined_names", "module_imports", "parse_module"]
