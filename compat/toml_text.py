"""TOML text parsed into a dict, with every way the parser fails as one error of one line.

The parser fails three ways: a syntax error (TOMLDecodeError), an array nested deeper than the stack (tomllib
recurses once per nested array: `a = [[[[...` thousands deep is a RecursionError), and an integer of more digits
than int() converts (sys.get_int_max_str_digits, 4300: a plain ValueError). Each caller names its file its own way.
"""

from __future__ import annotations

import sys
from typing import Any


class TomlError(ValueError):
    """What is wrong with the text, in one line."""


def parse_toml(text: str) -> dict[str, Any]:
    """The document `text` holds; raises TomlError. The parser is imported here, by the first file parsed."""
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
