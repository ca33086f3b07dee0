"""Logs against the catalog: a fast scanner over the patterns, then matches ranked for the environment."""
