"""explain on one long line of every shape: each rule examines a bounded stretch per start, so the
work is linear in the line (a 16,000-letter line once took 19 s in the version rules).

Every case runs `compat explain` in one child (tests/support/main.py's `compat_batch`) with a time bound far
above what a linear pass of them all needs; each test asserts that its case finished with a verdict and still reads
a statement after the long line. One child, not one per case: its start-up cost more than the fifteen explains.
"""

from __future__ import annotations

import pytest

from compat.explain.versions import stated_versions
from tests.support.main import compat_batch

N = 100_000
SHAPES = {
    "letters": "RuntimeError: " + "a" * N,
    "digits": "RuntimeError: " + "1" * N,
    "spaces": "RuntimeError: x" + " " * N + "x",
    "dotted-word": "RuntimeError: " + "a." * (N // 2),
    "words": "RuntimeError: " + "word " * (N // 5),
    "requires": "RuntimeError: " + "requires " * (N // 9),
    "built-for": "RuntimeError: " + "built for x 1 " * (N // 14),
    "is-required": "ImportError: " + "a>=1 is required " * (N // 17),
    "specifiers": "ImportError: a" + ">=1 " * (N // 4) + "x",
    "ray": "cluster was started with: Ray: 1 " * (N // 33),
    "glibc": "OSError: " + "version `GLIBC_2.3' not found (required by " * (N // 44),
    "invalid-choice": "error: argument x" + " " * N,
    "module": "ModuleNotFoundError: No module named '" + "a." * (N // 2) + "'",
    "keyword": "TypeError: f() got an unexpected keyword argument '" + "c" * N + "'",
    "traceback": "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * (N // 28) + "ValueError: " + "b" * N,
}


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    """Each shape's `compat explain` result (None if the child was killed at the bound before it ended)."""
    runs = []
    for shape in sorted(SHAPES):
        log = tmp_path_factory.mktemp(shape) / "train.log"
        log.write_text(SHAPES[shape] + "\nRuntimeError: requires torch>=2.4 but found 2.3.1\n")
        runs.append(["explain", str(log), "--no-env"])
    return dict(zip(sorted(SHAPES), compat_batch(runs, timeout=120), strict=True))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_long_line_is_explained_in_linear_time(explained, shape):
    result = explained[shape]
    assert result is not None, "not explained within the bound"
    assert result.returncode in (0, 1), result.stderr[-500:]
    assert b"torch>=2.4, found 2.3.1" in result.stdout


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_version_rule_reads_a_bounded_stretch(shape):
    stated = stated_versions(SHAPES[shape])
    # Each statement is read from a few hundred characters, whatever the line's length.
    assert all(len(s.text) <= 2_600 for s in stated)
    # glibc's shape is made of real statements; ray's states the same Ray on both sides, which is no mismatch.
    assert bool(stated) is (shape == "glibc")


def test_a_statement_at_the_end_of_a_long_line_is_still_read():
    (stated,) = stated_versions("RuntimeError: " + "a" * N + " vllm 0.7.2 requires torch==2.5.1, but you have torch 2.6.0 x")
    assert (stated.subject, stated.wanted, stated.found, stated.by) == ("torch", "==2.5.1", "2.6.0", "vllm")
