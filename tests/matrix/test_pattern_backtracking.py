"""Which catalog patterns Python's re would backtrack on for exponential time (refused at load)."""

from __future__ import annotations

import pytest

from compat.matrix.pattern_syntax import backtracking_problems


@pytest.mark.parametrize("pattern", [
    r"(a+)+$", r"(a*)*b", r"(\w+\s?)+$", r"(x+x+)+y", r"(a|a)*$", r"(a|aa)+$", r"(?:\.[\d.]+)*x", r"((ab)*c?)+d",
])
def test_exponential_patterns_are_named(pattern):
    assert backtracking_problems(pattern)


@pytest.mark.parametrize("pattern", [
    r"foo\d+bar", r"(?:ab+)+", r"libcudnn(_\w+)?\.so(\.\d+)*: cannot", r"(?:-\w+)+x", r"(?:foo|bar)+", r"a{2,5}b+",
    r"CUDA error: (out of memory|an illegal memory access)",
])
def test_linear_patterns_pass(pattern):
    assert backtracking_problems(pattern) == ()
