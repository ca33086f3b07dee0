"""Fixtures of the fault suite."""

from tests.fault.hostile_index import hostile_index

__all__ = ["hostile_index"]
