"""Compare a renderer's output with its golden file under tests/golden/data.

Regenerate after a deliberate output change with `COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/golden --no-cov`
(`--no-cov`: a partial run cannot reach the suite-wide coverage floor)
and read the diff: every changed line is an output change to explain in the commit.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA = Path(__file__).parent / "data"
UPDATE = os.environ.get("COMPAT_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = DATA / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{name}: no golden file; run with COMPAT_UPDATE_GOLDEN=1 to write it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"
