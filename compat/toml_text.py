"""TOML text parsed into a dict, with every way the parser fails as one error of one line.

The parser fails three ways: a syntax error (TOMLDecodeError), an array nested deeper than the stack (tomllib
recurses once per nested array: `a = [[[[...` thousands deep is a RecursionError), and an integer of more digits
than int() converts (sys.get_int_max_str_digits, 4300: a plain ValueError). Each caller names its file its own way.
"""

from __future__ import annotations

import sys
import threading
from typing import Any


class TomlError(ValueError):
    """What is wrong with the text, in one line."""


def parse_toml(text: str) -> dict[str, Any]:
    """The document `text` holds, a copy of its own for each call; raises TomlError. The parser is imported here, by
    the first file parsed."""
    import pickle

    blob = _PARSED.take(text)
    if blob is None:
        blob = pickle.dumps(_parse(text), protocol=pickle.HIGHEST_PROTOCOL)
    _PARSED.put(text, blob)
    data: dict[str, Any] = pickle.loads(blob)
    return data


class _Documents:
    """The documents this process parsed, by their text, pickled, the least recently used dropped past `limit` bytes:
    a load with an overlay (`--matrix DIR`), a validation or a test suite reads the same shipped files again, and
    the TOML parser is pure Python (an overlay's load was mostly parsing the shipped files again) where unpickling
    is C. Unpickled per call, each caller gets a copy it may change."""

    def __init__(self, limit: int) -> None:
        self._docs: dict[str, bytes] = {}
        self._size = 0
        self._limit = limit
        self._lock = threading.Lock()

    def take(self, text: str) -> bytes | None:
        with self._lock:
            blob = self._docs.pop(text, None)
            if blob is not None:
                self._size -= len(text) + len(blob)
            return blob

    def put(self, text: str, blob: bytes) -> None:
        with self._lock:
            old = self._docs.pop(text, None)  # another thread parsed it meanwhile
            if old is not None:
                self._size -= len(text) + len(old)
            self._docs[text] = blob  # the most recently used last
            self._size += len(text) + len(blob)
            while self._size > self._limit:
                oldest = next(iter(self._docs))
                self._size -= len(oldest) + len(self._docs.pop(oldest))


_PARSED = _Documents(limit=32 * 1024 * 1024)
"""The shipped matrix's TOML is 1.5 MB: the bound only keeps a process that reads many distinct files from growing."""


def _parse(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc).splitlines()[0]) from exc
    except RecursionError:
        raise TomlError("nested too deeply") from None
    except ValueError as exc:
        raise TomlError(str(exc).split(";")[0]) from None
