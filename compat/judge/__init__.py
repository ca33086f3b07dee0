"""Judging facts against the matrix: `when` conditions, the built-in checks, and diagnose."""
