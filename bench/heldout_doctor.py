"""Would `compat doctor` have flagged the held-out failures before the run (issue 23, item 6)?

For every environment log of a corpus whose thread states package versions (the manifest's `packages`),
the stated pins are judged as a requirements file, `compat doctor -r FILE --json --no-config`: the file
alone, not this machine. A log counts as prevented when a finding at error or warning severity names
what explain names for the same log: the same catalog id (or one the finding points at with `see`), or
the same package as explain's API or stated-version answer. Findings about packages the stated set
leaves out ("declared but not installed") are not counted: a thread states a few versions, never a
whole environment.

    python bench/heldout_doctor.py --corpus tests/data/heldout5
    python bench/heldout_doctor.py --corpus tests/data/heldout5 --json

A measurement, not a gate: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_score import corpus_arguments, score, tomllib

NOT_PACKAGES = frozenset({"python", "cuda", "driver", "cuda_driver", "nccl", "os", "gpu"})
"""Manifest keys that state the machine rather than a pip package."""


def _about_missing(finding: dict) -> bool:
    """A finding about a package the stated set leaves out (a thread states a few versions, not an environment)."""
    return any("not installed" in e.get("text", "") for e in finding.get("evidence", []))


@dataclass(frozen=True, kw_only=True)
class Prevented:
    id: str
    pins: tuple[str, ...]
    explain: tuple[str, ...]
    """What explain names for the log (catalog ids, `api:KEY`, `stated:PACKAGE`)."""
    flagged: tuple[str, ...]
    """doctor's error and warning findings on the stated pins (found, not undecided), less the missing-package ones."""
    prevented: bool


def pins(packages: dict[str, str]) -> tuple[str, ...]:
    out = []
    for name, version in sorted(packages.items()):
        if name.lower() in NOT_PACKAGES:
            continue
        try:
            out.append(str(Requirement(f"{name}=={str(version).strip()}")))
        except InvalidRequirement:
            continue
    return tuple(out)


def doctor(lines: tuple[str, ...], work: Path) -> list[dict]:
    req = work / "stated.txt"
    req.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "compat", "doctor", "-r", str(req), "--json", "--no-config"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    if done.returncode not in (0, 1):
        return []
    findings = json.loads(done.stdout).get("findings", [])
    return [f for f in findings
            if f.get("status") == "found" and f.get("severity") in ("error", "warning") and not _about_missing(f)]


def _same(finding: dict, named: tuple[str, ...]) -> bool:
    ids = {finding["id"], *finding.get("see", [])}
    if ids & {n.removesuffix(" (usage)") for n in named}:
        return True
    packages = {n.split(":", 1)[1].split(":")[0].split(".")[0].lower() for n in named if n.startswith(("api:", "stated:"))}
    text = (finding.get("title", "") + " " + " ".join(finding.get("fix", {}).get("requires", []))).lower()
    return any(p and p in text for p in packages)


def measure(corpus: Path) -> list[Prevented]:
    manifest = {e["id"]: e for e in tomllib.loads((corpus / "manifest.toml").read_text(encoding="utf-8"))["log"]}
    out = []
    with tempfile.TemporaryDirectory() as d:
        for row in score(corpus):
            entry = manifest[row.id]
            stated = pins(entry.get("packages", {}))
            if row.label != "environment" or not stated:
                continue
            findings = doctor(stated, Path(d))
            out.append(Prevented(
                id=row.id, pins=stated, explain=row.named, flagged=tuple(f["id"] for f in findings),
                prevented=any(_same(f, row.named) for f in findings),
            ))
    return out


def main(argv: list[str] | None = None) -> int:
    args = corpus_arguments(__doc__, argv)
    rows = measure(args.corpus)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    for r in rows:
        mark = "prevented" if r.prevented else ("flagged" if r.flagged else "-")
        print(f"{r.id:<24} {mark:<9}  {' '.join(r.pins)}  ->  {', '.join(r.flagged) or 'nothing'}")
    named = [r for r in rows if r.explain]
    print(f"\nenvironment logs with stated pins: {len(rows)}; doctor flags the failure explain names: "
          f"{sum(r.prevented for r in rows)} of {len(named)} that explain names; "
          f"any error or warning on the stated pins: {sum(bool(r.flagged) for r in rows)} of {len(rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
