"""Record the precision corpus: every `[[stack]]` of matrix/stacks.toml, completed by compat's own lock (as of its date).

Each stack's pins are locked with `exclude_newer` = the stack's date on the hardware the corpus declares
(8x H100, driver 580, Python 3.11, else 3.10 when the stack's releases predate 3.11), and the set the lock
pins is written to `sets.json` beside this file with the stack's id, project and source. A stack that does
not lock is recorded with the lock's message instead of a set. tests/judge/test_precision.py reads the
recorded sets, so a later change to the resolver does not silently change what doctor is judged on.

Regenerate (from the repository root, after a change to matrix/stacks.toml or on purpose) and read the diff:

    python tests/data/precision/record.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PYTHONS = ("3.11", "3.10")
GPUS, CC, DRIVER = 8, "9.0", "580.95.05"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from compat.errors import ResolutionError
    from compat.matrix import load_matrix
    from compat.resolve import resolve
    from tests.support.facts import make_facts

    matrix = load_matrix()
    out = []
    for stack in matrix.stacks.stacks:
        targets = [f"{name}=={version}" for name, version in sorted(stack.pins)]
        entry: dict[str, object] = {"id": stack.id, "project": stack.project, "source": stack.source, "date": stack.date,
                                    "targets": targets}
        error = ""
        for python in PYTHONS:
            facts = make_facts(gpus=GPUS, cc=CC, driver=DRIVER, python=python)
            try:
                lock = resolve(targets, facts, matrix, exclude_newer=stack.date)
            except ResolutionError as exc:
                error = error or str(exc).splitlines()[0]
                continue
            entry["python"] = python
            entry["set"] = {p.name: p.full_version for p in sorted(lock.pins, key=lambda p: p.name)}
            break
        else:
            entry["lock_error"] = error
        out.append(entry)
        print(stack.id, "locked" if "set" in entry else f"no lock: {error[:120]}", flush=True)
    (HERE / "sets.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
