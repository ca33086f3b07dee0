"""An error an issue quotes in its text is read as Python printed it: pasted outside a code block, where a forum or the
rendered text turned its quotes typographic (compat.explain.normalize.ascii_quotes), or quoted in backticks or a
Markdown link (compat.explain.roots: what may stand before an exception's type)."""

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


def test_an_error_an_issue_quotes_in_backticks_or_a_link_is_read(catalog):
    message = "'AcceleratorState' object has no attribute 'distributed_type'"
    for line in (f"Fails at start: `AttributeError: {message}`\n", f"[AttributeError: {message}](https://example.org/q/1)\n"):
        (error,) = explain([line], catalog).errors
        assert (error.root.type, error.root.message) == ("AttributeError", message), line
