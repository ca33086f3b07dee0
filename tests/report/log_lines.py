"""matrix/log-lines.toml, the real log line each signature page shows, from tests/data/logs/<id>.log."""

from __future__ import annotations

import json
import re
from pathlib import Path

from compat.matrix import Matrix

ROOT = Path(__file__).resolve().parent.parent.parent
LOGS = ROOT / "tests" / "data" / "logs"
SHIPPED = ROOT / "matrix" / "log-lines.toml"
MAX = 400


def first_match(sig_patterns: tuple[str, ...], text: str) -> str | None:
    compiled = [re.compile(p) for p in sig_patterns]
    for line in text.splitlines():
        if any(c.search(line) for c in compiled):
            line = line.strip()
            return line if len(line) <= MAX else line[: MAX - 1] + "…"
    return None


def render(matrix: Matrix) -> str:
    out = [
        "# One real log line per signature, shown on its page of `compat matrix site`.",
        "# Generated from tests/data/logs/<id>.log (the first line the signature's patterns match):",
        "# COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/report/test_site.py --no-cov",
        "",
        "[lines]",
    ]
    for sig in sorted(matrix.signatures, key=lambda s: s.id):
        log = LOGS / f"{sig.id}.log"
        if not sig.patterns or not log.is_file():
            continue
        line = first_match(sig.patterns, log.read_text(encoding="utf-8", errors="replace"))
        if line:
            out.append(f"{json.dumps(sig.id)} = {json.dumps(line, ensure_ascii=False)}")
    return "\n".join(out) + "\n"
