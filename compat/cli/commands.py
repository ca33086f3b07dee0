"""Imports every command module so that each registers itself on the app."""

from compat.cli import (
    doctor,  # noqa: F401
    explain,  # noqa: F401
    fleet,  # noqa: F401
    lock,  # noqa: F401
    matrix,  # noqa: F401
    smoke,  # noqa: F401
)
