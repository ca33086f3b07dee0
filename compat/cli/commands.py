"""Imports every command module so that each registers itself on the app."""

from compat.cli import doctor  # noqa: F401
from compat.cli import matrix  # noqa: F401
from compat.cli import lock  # noqa: F401
from compat.cli import explain  # noqa: F401
