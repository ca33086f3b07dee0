"""An error pasted outside a code block, where a forum or an issue's rendered text turned its quotes typographic, is
read as Python printed it (compat.explain.normalize.ascii_quotes)."""

from __future__ import annotations

from compat.explain.match import explain
from compat.explain.normalize import ascii_quotes
from compat.explain.verdict import ErrorVerdict


def test_typographic_quotes_are_read_as_ascii_and_lines_are_kept():
    block = "a \u2018x\u2019 and \u201cy\u201d\nline two \u2014 kept\n".encode()
    assert ascii_quotes(block) == "a 'x' and \"y\"\nline two \u2014 kept\n".encode()
    plain = b"no quotes here\n"
    assert ascii_quotes(plain) is plain


def test_an_import_error_with_typographic_quotes_is_the_import_error(catalog):
    line = "ImportError: cannot import name \u2018top_k_top_p_filtering\u2019 from \u2018transformers\u2019\n"
    result = explain([line], catalog)
    (error,) = result.errors
    assert error.root.type == "ImportError" and error.root.message.startswith("cannot import name 'top_k_top_p_filtering'")
    assert error.verdict is ErrorVerdict.KNOWN and "trl-top-k-top-p-filtering-import" in error.signatures
