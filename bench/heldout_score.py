"""How `compat explain` does on the held-out corpus: real failure logs the catalog was not written from.

The corpus (tests/data/heldout/, issue 23) is a set of logs copied from public issue threads, each
labelled from its thread's resolution, never from what compat answers: `environment`, `usage` (a
mistake in the user's configuration or launch) or `not-environment` (a bug in the user's own code
or data). No thread in it is cited by matrix/ (tests/explain/test_heldout_corpus.py checks that),
so the figures measure what explain does on failures nobody wrote a signature from.

Each log is explained in-process by the log alone (`--no-env`: the facts of this machine say nothing
about the reporter's). The figures, and a table per log:

- environment logs named: the verdict is `known` and an id says by what (a catalog entry that is
  not a configuration mistake, the API timeline, a stated version);
- environment logs called `not-environment`: the one answer that sends a user the wrong way;
- usage logs called an environment failure (`known` on an entry that is not a usage entry);
- not-environment logs called an environment failure (`known` or `unknown-environment`).

It is a measurement, not a gate: the exit status is 0 whatever the figures.

    python bench/heldout_score.py                # the corpus in tests/data/heldout
    python bench/heldout_score.py --json         # the same as JSON, one object per log
    python bench/heldout_score.py --corpus DIR   # another corpus with the same manifest format
    python bench/heldout_score.py --environment  # with this machine's environment probed, as `compat explain LOG`
    python bench/heldout_score.py --corpus tests/data/heldout2   # the second, blind corpus
    python bench/heldout_score.py --corpus tests/data/heldout5   # the fifth corpus (gathered and scored blind 2026-11-27)
    python bench/heldout_score.py --corpus tests/data/heldout6   # the sixth (gathered 2026-11-27, scored blind after that round)
    python bench/heldout_score.py --corpus tests/data/heldout7   # the seventh (gathered 2026-11-27/28, scored blind 2026-11-28)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from compat import api
from compat.explain.records import Explanation

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "heldout"
RECENT = "2025"
"""Logs dated from this year on are the newest set (the issue's 2025-2026 figure)."""


@dataclass(frozen=True, kw_only=True)
class Scored:
    id: str
    label: str
    date: str
    verdict: str
    named: tuple[str, ...]
    """What a `known` verdict rests on: catalog ids (usage entries marked), API keys, stated versions."""
    environment_entry: bool
    """A `known` verdict that is not a configuration mistake: some entry, API answer or stated version says environment."""


def _named(explanation: Explanation) -> tuple[tuple[str, ...], bool]:
    names: list[str] = []
    environment = False
    for match in explanation.matches:
        if match.signature.wrapper:
            continue
        names.append(match.signature.id + (" (usage)" if match.signature.usage else ""))
        environment = environment or not match.signature.usage
    for error in explanation.errors:
        if error.wrapper or error.verdict.value != "known":
            continue
        if error.api is not None:
            names.append(f"api:{error.api.key or error.api.package}")
            environment = True
        for stated in error.versions:
            names.append(f"stated:{stated.subject}")
            environment = True
        environment = environment or bool(error.signatures)
    return tuple(dict.fromkeys(names)), environment


def score(corpus: Path, environment: bool = False) -> list[Scored]:
    """`environment`: explain as a plain `compat explain LOG` does, with this machine's environment probed (offline),
    instead of by the log alone: a log the installed releases contradict must get the same verdict."""
    manifest = tomllib.loads((corpus / "manifest.toml").read_text(encoding="utf-8"))
    out = []
    request = api.ExplainRequest(use_environment=environment, offline=True)
    for entry in manifest["log"]:
        explanation = api.explain(request, api.read_log(str(corpus / f"{entry['id']}.log")))
        named, environment = _named(explanation)
        out.append(Scored(
            id=entry["id"], label=entry["label"], date=str(entry["date"]), verdict=explanation.verdict.value,
            named=named, environment_entry=explanation.verdict.value == "known" and environment,
        ))
    return out


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def summary(rows: list[Scored]) -> list[str]:
    env = [r for r in rows if r.label == "environment"]
    recent = [r for r in env if r.date >= RECENT]
    usage = [r for r in rows if r.label == "usage"]
    mine = [r for r in rows if r.label == "not-environment"]

    def named(group: list[Scored]) -> int:
        return sum(r.verdict == "known" and bool(r.named) for r in group)

    return [
        f"logs: {len(rows)} ({len(env)} environment, {len(usage)} usage, {len(mine)} not-environment)",
        f"environment logs named (known, with an id): {_share(named(env), len(env))}",
        f"  of them dated {RECENT} or later: {_share(named(recent), len(recent))}",
        f"environment logs called not-environment: {_share(sum(r.verdict == 'not-environment' for r in env), len(env))}",
        f"environment logs called unknown-environment: {_share(sum(r.verdict == 'unknown-environment' for r in env), len(env))}",
        f"usage logs called an environment failure: {sum(r.environment_entry for r in usage)} of {len(usage)}"
        f" (known-usage: {sum(r.verdict == 'known-usage' for r in usage)})",
        f"not-environment logs called an environment failure: "
        f"{sum(r.verdict in ('known', 'unknown-environment') for r in mine)} of {len(mine)}"
        f" (known: {sum(r.verdict == 'known' for r in mine)},"
        f" unknown-environment: {sum(r.verdict == 'unknown-environment' for r in mine)})",
    ]


def table(rows: list[Scored]) -> list[str]:
    width = max(len("log"), *(len(r.id) for r in rows))
    lines = [f"{'log':<{width}}  {'label':<15}  {'date':<10}  {'verdict':<19}  named"]
    for r in sorted(rows, key=lambda r: (r.label, r.id)):
        lines.append(f"{r.id:<{width}}  {r.label:<15}  {r.date:<10}  {r.verdict:<19}  {', '.join(r.named) or '-'}")
    return lines


def corpus_arguments(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """`--corpus DIR` and `--json`, the arguments of every measurement over a corpus."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="directory with manifest.toml and <id>.log files")
    parser.add_argument("--json", action="store_true", help="one JSON object per log instead of the table")
    parser.add_argument("--environment", action="store_true",
                        help="probe this machine's environment, as a plain `compat explain LOG` does (default: the log alone)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = corpus_arguments(__doc__, argv)
    rows = score(args.corpus, environment=args.environment)
    if args.json:
        print(json.dumps([r.__dict__ for r in rows], indent=1))
    else:
        print("\n".join(table(rows) + [""] + summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
