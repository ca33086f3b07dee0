"""`compat doctor` and `compat facts` (placeholder until the doctor lands)."""

from __future__ import annotations

from compat.cli import app


@app.command()
def doctor() -> None:
    """Probe this environment and report what is wrong or at risk, why, and how to fix it."""
    raise NotImplementedError
