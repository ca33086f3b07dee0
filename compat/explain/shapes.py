"""The exception type a message's own shape says, for a message printed without its type.

An issue's title or a one-line paste often keeps only the message (`'Accelerator' object has no attribute
'deepspeed_engine_wrapped'`), and a lazy importer's wrapper carries the inner error's message alone (transformers'
and diffusers' `Failed to import X because of the following error:` then `name 'logger' is not defined`). These
messages are Python's own wordings, one type each, so the type is known and the API timeline and the catalog's
typed patterns can read them as the errors they are.
"""

from __future__ import annotations

import re

_SHAPES = (
    ("AttributeError", r"'?[\w.]+' object has no attribute '\w+'"),
    ("AttributeError", r"module '[\w.]+' has no attribute '\w+'"),
    ("AttributeError", r"type object '[\w.]+' has no attribute '\w+'"),
    ("NameError", r"name '\w+' is not defined"),
    ("TypeError", r"(?:[\w.]+|<lambda>)\(\) (?:got an unexpected keyword argument|got multiple values for argument|"
                  r"missing \d+ required (?:positional|keyword-only) argument|takes (?:from \d+ to )?\d+ positional argument)"),
    ("ModuleNotFoundError", r"No module named '"),
    ("ImportError", r"cannot import name '"),
)
_SHAPE = re.compile("|".join(f"({p})" for _, p in _SHAPES))

BARE_CALL = re.compile(r"(?:[\w.]+|<lambda>)\(\) (?:got an unexpected keyword argument (?:'\w+'|`?\w+`?)|"
                        r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given|"
                        r"missing \d+ required (?:positional|keyword-only) arguments?: '\w+'(?:(?:, |,? and )'\w+')*)")
"""A call's TypeError without its type: the callee and the argument (quoted as Python prints it or not: retyped), or
the count of positional arguments it takes and was given, or the ones it misses."""

BARE_WRAPPER = re.compile(r"Failed to import [\w.]+ because of the following error\b")
"""A lazy importer's wrapper message (transformers', diffusers') quoted without its RuntimeError: the message of the
error it wraps follows on the next lines."""

BARE_MEMBER = re.compile(r"(?<![\w.'])'?([A-Za-z_][\w.]*)' object has no attribute '(\w+)'")
"""A member's AttributeError inside a line of prose or a title, its opening quote sometimes lost to the paste."""


def type_of(message: str) -> str:
    """The type Python gives a message of this shape (at its start); "" for any other message."""
    m = _SHAPE.match(message)
    return "" if m is None else _SHAPES[(m.lastindex or 1) - 1][0]
