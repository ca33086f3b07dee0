"""The shipped matrix, loaded once per test process, and its validation.

A Matrix is frozen and its release index only caches what it reads, so tests that merely read the shipped data share
one: loading it costs a quarter of a second, and helpers called per package (fakeenv.requires_of) paid that each time.
"""

from __future__ import annotations

from functools import cache

from compat.matrix import Matrix, load_matrix
from compat.model.curation import Validation


@cache
def shipped_matrix() -> Matrix:
    return load_matrix()


@cache
def shipped_validation() -> Validation:
    """`compat matrix validate --no-audit` of the shipped matrix: 4-5 s of CPU, which five test files each paid.
    A Validation is frozen; the tests that change the matrix validate their own copy or overlay."""
    from compat.maintain.validate import validate_matrix

    return validate_matrix(audit_patterns=False)
