"""The held-out corpora (tests/data/heldout, heldout2 ... heldout30, issue 23) and
the development set (tests/data/dev) stay what bench/heldout_score.py assumes they are: every log sourced, dated and
labelled, none taken from a thread the catalog cites, and no thread in two corpora. This checks the manifests, never
the score: the score is a measurement (bench/heldout_score.py --corpus DIR)."""

from __future__ import annotations

import re
import sys
from datetime import date
from functools import cache
from pathlib import Path

import pytest

from tests.support.paths import DATA, ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# heldout2 ... heldout30 were each gathered blind, while later rounds' changes were being made: kept separate so that
# their scores are never tuned against. dev is a development set, scored while changes were made (its manifest says
# so): its entries obey the same rules, so that it stays distinct from the held-out ones.
CORPORA = (
    DATA / "heldout",
    DATA / "heldout2",
    DATA / "heldout3",
    DATA / "heldout4",
    DATA / "heldout5",
    DATA / "heldout6",
    DATA / "heldout7",
    DATA / "heldout8",
    DATA / "heldout9",
    DATA / "heldout10",
    DATA / "heldout11",
    DATA / "heldout12",
    DATA / "heldout13",
    DATA / "heldout14",
    DATA / "heldout15",
    DATA / "heldout16",
    DATA / "heldout17",
    DATA / "heldout18",
    DATA / "heldout19",
    DATA / "heldout20",
    DATA / "heldout21",
    DATA / "heldout22",
    DATA / "heldout23",
    DATA / "heldout24",
    DATA / "heldout25",
    DATA / "heldout26",
    DATA / "heldout27",
    DATA / "heldout28",
    DATA / "heldout29",
    DATA / "heldout30",
    DATA / "dev",
)
LABELS = {"environment", "usage", "not-environment"}
FIELDS = {"id", "source", "date", "label", "why", "packages"}
_THREAD = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:issues|pull|discussions)/(\d+)")
# How matrix/ cites a thread: "owner/repo#N", a full URL, or a short "repo#N" in prose.
_REF = re.compile(r"(?:github\.com/[\w.-]+/([\w.-]+)/(?:issues|pull|discussions)/(\d+))|(?:\b([\w.-]+)#(\d+)\b)")

by_corpus = pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.name)


def _repo(name: str) -> str:
    """A repository name as refs spell it in several ways (LLaMA-Factory, LlamaFactory, llama_factory)."""
    return re.sub(r"[-_.]", "", name.lower())


def _entries(corpus: Path) -> list[dict]:
    return tomllib.loads((corpus / "manifest.toml").read_text(encoding="utf-8"))["log"]


def _thread(entry: dict) -> tuple[str, str] | None:
    m = _THREAD.search(entry["source"])
    return (_repo(m.group(2)), m.group(3)) if m else None


@cache
def _cited() -> frozenset[tuple[str, str]]:
    """Every (repository, number) a text file under matrix/ or tests/ (the corpora aside) mentions."""
    cited = set()
    for folder in (ROOT / "matrix", ROOT / "tests"):
        for path in folder.rglob("*"):
            if not path.is_file() or any(c in path.parents for c in CORPORA) or path.suffix in {".gz", ".whl", ".pyc"}:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for m in _REF.finditer(text):
                repo, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(3).rsplit("/", 1)[-1], m.group(4))
                cited.add((_repo(repo), number))
    return frozenset(cited)


@by_corpus
def test_every_entry_is_complete_and_labelled(corpus: Path) -> None:
    entries = _entries(corpus)
    assert entries
    for e in entries:
        assert set(e) == FIELDS, e.get("id")
        assert e["label"] in LABELS, e["id"]
        assert _THREAD.search(e["source"]) or e["source"].startswith("https://"), e["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", e["date"]) and date.fromisoformat(e["date"]) <= date.today(), e["id"]
        assert e["why"].strip(), e["id"]
        assert all(isinstance(v, str) for v in e["packages"].values()), e["id"]


@by_corpus
def test_ids_and_files_match_one_to_one(corpus: Path) -> None:
    ids = [e["id"] for e in _entries(corpus)]
    assert len(ids) == len(set(ids))
    for i in ids:
        log = corpus / f"{i}.log"
        assert log.is_file() and log.read_text(encoding="utf-8").strip(), i
    assert {p.stem for p in corpus.glob("*.log")} == set(ids)


@by_corpus
def test_one_log_per_thread(corpus: Path) -> None:
    entries = _entries(corpus)
    sources = [e["source"] for e in entries]
    assert len(sources) == len(set(sources))
    threads = [t for t in map(_thread, entries) if t]
    assert len(threads) == len(set(threads))


@by_corpus
def test_no_log_comes_from_a_thread_the_catalog_or_the_suite_cites(corpus: Path) -> None:
    cited = _cited()
    assert ("trl", "2851") in cited  # the scan sees refs at all (a thread matrix/ is known to cite)
    reused = [e["id"] for e in _entries(corpus) if _thread(e) in cited]
    assert reused == []


def test_no_thread_is_in_two_corpora() -> None:
    threads = [{t for t in map(_thread, _entries(c)) if t} for c in CORPORA]
    sources = [{e["source"] for e in _entries(c)} for c in CORPORA]
    assert all(threads)
    for i in range(len(CORPORA)):
        for j in range(i + 1, len(CORPORA)):
            assert threads[i] & threads[j] == set(), (CORPORA[i].name, CORPORA[j].name)
            assert sources[i] & sources[j] == set(), (CORPORA[i].name, CORPORA[j].name)


@by_corpus
@pytest.mark.parametrize("label", sorted(LABELS))
def test_each_label_has_logs(corpus: Path, label: str) -> None:
    assert any(e["label"] == label for e in _entries(corpus))


@by_corpus
def test_the_corpus_is_not_a_recorded_log_folder(corpus: Path) -> None:
    # Tests that run over every recorded log read tests/data/logs; the held-out logs must stay out of it.
    assert corpus.is_dir()
    assert not Path(DATA / "logs").resolve().is_relative_to(corpus.resolve())
    assert not corpus.resolve().is_relative_to((DATA / "logs").resolve())
