"""The held-out corpus (tests/data/heldout, issue 23) stays what bench/heldout_score.py assumes it is:
every log sourced, dated and labelled, and none taken from a thread the catalog cites. This checks
the manifest, never the score: the score is a measurement (bench/heldout_score.py)."""

from __future__ import annotations

import re
import sys
from datetime import date
from pathlib import Path

import pytest

from tests.support.paths import DATA, ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

HELDOUT = DATA / "heldout"
LABELS = {"environment", "usage", "not-environment"}
FIELDS = {"id", "source", "date", "label", "why", "packages"}
_THREAD = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)")
# How matrix/ cites a thread: "owner/repo#N", a full URL, or a short "repo#N" in prose.
_REF = re.compile(r"(?:github\.com/[\w.-]+/([\w.-]+)/(?:issues|pull|discussions)/(\d+))|(?:\b([\w.-]+)#(\d+)\b)")


def _repo(name: str) -> str:
    """A repository name as refs spell it in several ways (LLaMA-Factory, LlamaFactory, llama_factory)."""
    return re.sub(r"[-_.]", "", name.lower())


def _entries() -> list[dict]:
    return tomllib.loads((HELDOUT / "manifest.toml").read_text(encoding="utf-8"))["log"]


def _cited() -> set[tuple[str, str]]:
    """Every (repository, number) a text file under matrix/ or tests/ (the corpus aside) mentions."""
    cited = set()
    for folder in (ROOT / "matrix", ROOT / "tests"):
        for path in folder.rglob("*"):
            if not path.is_file() or HELDOUT in path.parents or path.suffix in {".gz", ".whl", ".pyc"}:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for m in _REF.finditer(text):
                repo, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(3).rsplit("/", 1)[-1], m.group(4))
                cited.add((_repo(repo), number))
    return cited


def test_every_entry_is_complete_and_labelled() -> None:
    entries = _entries()
    assert entries
    for e in entries:
        assert set(e) == FIELDS, e.get("id")
        assert e["label"] in LABELS, e["id"]
        assert _THREAD.search(e["source"]) or e["source"].startswith("https://"), e["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", e["date"]) and date.fromisoformat(e["date"]) <= date.today(), e["id"]
        assert e["why"].strip(), e["id"]
        assert all(isinstance(v, str) for v in e["packages"].values()), e["id"]


def test_ids_and_files_match_one_to_one() -> None:
    ids = [e["id"] for e in _entries()]
    assert len(ids) == len(set(ids))
    for i in ids:
        log = HELDOUT / f"{i}.log"
        assert log.is_file() and log.read_text(encoding="utf-8").strip(), i
    assert {p.stem for p in HELDOUT.glob("*.log")} == set(ids)


def test_one_log_per_thread() -> None:
    sources = [e["source"] for e in _entries()]
    assert len(sources) == len(set(sources))


def test_no_log_comes_from_a_thread_the_catalog_or_the_suite_cites() -> None:
    cited = _cited()
    assert ("trl", "2851") in cited  # the scan sees refs at all (a thread matrix/ is known to cite)
    reused = []
    for e in _entries():
        m = _THREAD.search(e["source"])
        if m and (_repo(m.group(2)), m.group(3)) in cited:
            reused.append(e["id"])
    assert reused == []


@pytest.mark.parametrize("label", sorted(LABELS))
def test_each_label_has_logs(label: str) -> None:
    assert any(e["label"] == label for e in _entries())


def test_the_corpus_is_not_a_recorded_log_folder() -> None:
    # Tests that run over every recorded log read tests/data/logs; the held-out logs must stay out of it.
    assert not Path(DATA / "logs").resolve().is_relative_to(HELDOUT.resolve())
    assert not HELDOUT.resolve().is_relative_to((DATA / "logs").resolve())
