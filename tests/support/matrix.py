"""The shipped matrix, loaded once per test process.

A Matrix is frozen and its release index only caches what it reads, so tests that merely read the shipped data share
one: loading it costs a quarter of a second, and helpers called per package (fakeenv.requires_of) paid that each time.
"""

from __future__ import annotations

from functools import cache

from compat.matrix import Matrix, load_matrix


@cache
def shipped_matrix() -> Matrix:
    return load_matrix()
