"""typer's coercion of an option's value, without importing pydantic for the values that need none of it.

typer 0.2x coerces every value through a pydantic TypeAdapter built on first use, and importing pydantic costs
about a fifth of `compat explain` on a pasted log. Most values compat's commands receive are absent (typer's own
`RuntimeParam.coerce` answers those before any adapter), a string, a path or a choice: for these typer's adapter
only calls typer's own function (`coerce_cli_path`, `coerce_cli_choice`) or returns the string, so they are
answered here the same way. Anything else, and every value those functions reject, goes to typer's adapter, so
what is accepted and every error message stay typer's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, get_origin


def install() -> None:
    """Route typer's parameters through `_Deferred`; a typer without the expected internals is left as it is."""
    try:
        from typer import _coercion, _param_types, core
    except ImportError:
        return
    needed = (
        hasattr(core, "build_runtime_param") and hasattr(_coercion, "RuntimeParam")
        and hasattr(_param_types, "coerce_cli_path") and hasattr(_param_types, "coerce_cli_choice")
        and hasattr(_param_types, "routes_to_path")
    )
    if not needed or getattr(core.build_runtime_param, "_compat_deferred", False):
        return
    typer_build = core.build_runtime_param

    @dataclass(frozen=True)
    class _Deferred(_coercion.RuntimeParam):
        descriptor: Any = None
        built: list[Any] = field(default_factory=list)  # typer's own RuntimeParam, built when first needed

        def _typer(self) -> Any:
            if not self.built:
                self.built.append(typer_build(self.descriptor))
            return self.built[0]

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                return _plain(self.descriptor, value, param, ctx, _param_types)
            except (_NotPlain, ValueError):
                return self._typer()._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: Any) -> Any:
        if descriptor.file_annotation is not None or descriptor.parameter_info.parser is not None:
            return typer_build(descriptor)
        return _Deferred(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, descriptor=descriptor)

    build._compat_deferred = True  # type: ignore[attr-defined]
    core.build_runtime_param = build


class _NotPlain(Exception):
    """The value needs typer's pydantic adapter."""


def _plain(descriptor: Any, value: Any, param: Any, ctx: Any, types: Any) -> Any:
    """What typer's adapter gives for a string, a path or an enum choice (the order is that of typer's
    `build_leaf_adapter`); raises _NotPlain for anything else."""
    annotation, info = descriptor.annotation, descriptor.parameter_info
    if get_origin(annotation) is not None:  # list[Path], tuple[...], Annotated[...]: typer's adapter
        raise _NotPlain
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return types.coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    if annotation is str:
        if isinstance(value, str):
            return value
        raise _NotPlain
    if isinstance(annotation, type) and issubclass(annotation, Path) and types.routes_to_path(annotation, info):
        path_type = info.path_type if info.path_type is not None else annotation
        if path_type is Path and isinstance(value, str) and value:
            value = Path(value)  # what pydantic's TypeAdapter(Path), which typer asks here, makes of a string
        return types.coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)
    raise _NotPlain
