"""Typed JSON encoding for the frozen dataclasses of compat (Facts, findings, locks).

Encoding is the obvious mapping; decoding is driven by the type hints, so a document that
does not fit the declared types is rejected with the path of the offending key.
`Unknown` is written as {"unknown": reason} wherever a field allows it.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar, Union

from compat.model.unknown import Unknown

T = TypeVar("T")


class DecodeError(ValueError):
    """A JSON value does not fit the declared type; the message starts with the key path."""


def encode(value: Any) -> Any:
    if isinstance(value, Unknown):
        return {"unknown": value.reason}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def decode(cls: type[T], data: Any) -> T:
    return _decode(cls, data, "$")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@cache
def _fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """Each field's name and whether it is required (no default)."""
    return tuple((f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
                 for f in dataclasses.fields(cls))


def _decode(tp: Any, data: Any, path: str) -> Any:
    # The common case first: a string or number where one is expected (400,000 packages are
    # millions of these; the generic path below costs a type inspection each).
    if tp is str and type(data) is str:
        return data
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _decode_union(typing.get_args(tp), data, path)
    if tp is Any:
        return data
    # Unknown is a dataclass too: it is read by its own shape, before the dataclasses.
    if tp in _SCALARS:
        return _SCALARS[tp](data, path)
    if origin is tuple:
        return _decode_tuple(typing.get_args(tp)[0], data, path)
    if origin is dict:
        return _decode_dict(typing.get_args(tp), data, path)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _decode_enum(tp, data, path)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, path)
    raise TypeError(f"codec cannot decode {tp!r}")  # a bug in compat, not in the input


def _decode_none(data: Any, path: str) -> None:
    if data is None:
        return None
    raise DecodeError(f"{path}: expected null")


def _decode_unknown(data: Any, path: str) -> Unknown:
    if isinstance(data, dict) and set(data) == {"unknown"} and isinstance(data["unknown"], str):
        return Unknown(reason=data["unknown"])
    raise DecodeError(f"{path}: expected {{\"unknown\": reason}}")


def _decode_bool(data: Any, path: str) -> bool:
    if isinstance(data, bool):
        return data
    raise DecodeError(f"{path}: expected true or false")


def _decode_int(data: Any, path: str) -> int:
    if isinstance(data, int) and not isinstance(data, bool):
        return data
    raise DecodeError(f"{path}: expected an integer")


def _decode_float(data: Any, path: str) -> float:
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return float(data)
    raise DecodeError(f"{path}: expected a number")


def _decode_str(data: Any, path: str) -> str:
    if isinstance(data, str):
        return data
    raise DecodeError(f"{path}: expected a string")


_SCALARS: dict[Any, Callable[[Any, str], Any]] = {
    type(None): _decode_none, Unknown: _decode_unknown, bool: _decode_bool, int: _decode_int, float: _decode_float,
    str: _decode_str,
}
"""The types read by one check of the value's own type."""


def _decode_tuple(item: Any, data: Any, path: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise DecodeError(f"{path}: expected a list")
    return tuple(_decode(item, v, f"{path}[{i}]") for i, v in enumerate(data))


def _decode_dict(args: tuple[Any, ...], data: Any, path: str) -> dict[Any, Any]:
    key_tp, val_tp = args
    if not isinstance(data, dict):
        raise DecodeError(f"{path}: expected an object")
    return {_decode(key_tp, k, path): _decode(val_tp, v, f"{path}.{k}") for k, v in data.items()}


def _decode_enum(tp: type[enum.Enum], data: Any, path: str) -> enum.Enum:
    try:
        return tp(data)
    except ValueError:
        choices = ", ".join(repr(m.value) for m in tp)
        raise DecodeError(f"{path}: {data!r} is not one of {choices}") from None


def _decode_union(args: tuple[Any, ...], data: Any, path: str) -> Any:
    if data is None and type(None) in args:
        return None
    if type(data) is str and str in args and all(a in (str, type(None), Unknown) for a in args):
        return data  # only a str can take a string here: the alternatives need not be tried
    # Unknown is tried first: its shape ({"unknown": ...}) cannot be mistaken for another value.
    ordered = sorted(args, key=lambda a: a is not Unknown)
    errors = []
    for arg in ordered:
        try:
            return _decode(arg, data, path)
        except DecodeError as exc:
            errors.append(str(exc).removeprefix(f"{path}: "))
    raise DecodeError(f"{path}: " + " or ".join(dict.fromkeys(errors)))


def _decode_dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(f"{path}: expected an object")
    hints = _hints(cls)
    fields = _fields(cls)
    kwargs = {}
    for name, required in fields:
        if name in data:
            kwargs[name] = _decode(hints[name], data[name], f"{path}.{name}")
        elif required:
            raise DecodeError(f"{path}: missing key {name!r}")
    unexpected = set(data) - {name for name, _ in fields} if len(data) > len(kwargs) else ()
    if unexpected:
        raise DecodeError(f"{path}: unexpected key {sorted(unexpected)[0]!r}")
    return cls(**kwargs)
