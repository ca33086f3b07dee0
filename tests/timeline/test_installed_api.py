"""Installed releases the API index has not read: their files answer, read with ast, never imported."""

from __future__ import annotations

import sys

from compat.judge.checks.import_links import BROKEN, check_import_links
from compat.matrix import load_matrix
from compat.model.unknown import Unknown
from compat.sources.installed_api import MAX_MODULES, installed_releases, site_dirs
from compat.timeline.links import ApiSource, broken_links
from compat.timeline.records import ApiKind, ImportEdge, ImportKind
from tests.explain.test_explain import _facts
from tests.timeline.api_fixture import write_index

TRL_CORE = """
import torch
from transformers import top_k_top_p_filtering, PreTrainedModel
try:
    from vllm import SamplingParams
except ImportError:
    SamplingParams = None
def lazy():
    from transformers.generation import GenerationConfig
"""


def _site(tmp_path):
    site = tmp_path / "site-packages"
    (site / "trl").mkdir(parents=True)
    (site / "trl" / "__init__.py").write_text("from .core import lazy\n__version__ = '0.7.9'\n")
    (site / "trl" / "core.py").write_text(TRL_CORE)
    (site / "transformers").mkdir()
    (site / "transformers" / "__init__.py").write_text("class PreTrainedModel: ...\ndef pipeline(): ...\n")
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text("from vllm.sampling_params import SamplingParams\n")
    (site / "vllm" / "sampling_params.py").write_text("class SamplingParams: ...\n")
    (site / "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    return site


def test_installed_files_answer_for_unindexed_releases(tmp_path):
    site = _site(tmp_path)
    found = installed_releases((site,), {"trl": "0.7.9", "transformers": "4.40.1", "vllm": "0.11.0", "peft": "0.10.0"})
    assert sorted(found) == ["transformers", "trl", "vllm"]
    trl, tf = found["trl"], found["transformers"]
    assert trl.imports("0.7.9", "transformers") == (
        ImportEdge(module="trl.core", target="transformers", name="PreTrainedModel", kind=ImportKind.TOP_LEVEL),
        ImportEdge(module="trl.core", target="transformers", name="top_k_top_p_filtering", kind=ImportKind.TOP_LEVEL),
        ImportEdge(module="trl.core", target="transformers.generation", name="GenerationConfig", kind=ImportKind.LAZY),
    )
    assert [e.kind for e in trl.imports("0.7.9", "vllm")] == [ImportKind.GUARDED]
    assert tf.has(ApiKind.NAME, "transformers:pipeline", "4.40.1") is True
    assert tf.has(ApiKind.NAME, "transformers:top_k_top_p_filtering", "4.40.1") is False
    assert isinstance(tf.has(ApiKind.NAME, "transformers:x", "4.39.0"), Unknown)
    assert isinstance(tf.has(ApiKind.PARAM, "transformers:Trainer(x)", "4.40.1"), Unknown)
    assert isinstance(found["vllm"].has(ApiKind.NAME, "vllm:LLM", "0.11.0"), Unknown) is False
    # Both sides from the files: the top-level import is broken, the lazy one's module is absent too.
    source = ApiSource((tmp_path / "none",), found)
    links = broken_links(source, "trl", "0.7.9", "transformers", "4.40.1")
    assert not isinstance(links, Unknown)
    assert [(lk.key, lk.edge.kind) for lk in links] == [
        ("transformers:top_k_top_p_filtering", ImportKind.TOP_LEVEL), ("transformers.generation", ImportKind.LAZY)]
    assert broken_links(source, "trl", "0.7.9", "vllm", "0.11.0") == ()


def test_doctor_mixes_the_index_and_the_installed_files(tmp_path):
    # trl 0.7.9 is not indexed (its files answer); transformers 4.39.0 is (the index answers and gives the fix).
    site = _site(tmp_path)
    matrix = load_matrix((write_index(tmp_path / "m"),))
    found = installed_releases((site,), {"trl": "0.7.9"})
    facts = _facts({"trl": "0.7.9", "transformers": "4.39.0"})
    findings = list(check_import_links(facts, matrix, ApiSource(matrix.roots, dict(found))))
    # The lazy import's name is not in the fixture's index: the index cannot say, so nothing is claimed.
    assert [f.id for f in findings] == [BROKEN]
    assert findings[0].fix.commands == ("pip install 'trl>=0.8.0'", "pip install 'transformers<4.39.0'")


def test_lazy_modules_and_big_packages_decide_nothing(tmp_path):
    site = tmp_path / "site"
    (site / "transformers").mkdir(parents=True)
    (site / "transformers" / "__init__.py").write_text("_import_structure = {'x': ['y']}\n")
    (site / "big").mkdir()
    (site / "big" / "__init__.py").write_text("")
    for i in range(MAX_MODULES + 1):
        (site / "big" / f"m{i}.py").write_text("")
    found = installed_releases((site,), {"transformers": "4.40.1", "big": "1.0"})
    assert isinstance(found["transformers"].has(ApiKind.NAME, "transformers:y", "4.40.1"), Unknown)
    assert isinstance(found["big"].imports("1.0", "transformers"), Unknown)
    assert isinstance(found["big"].imports("2.0", "transformers"), Unknown)


def test_site_dirs_of_this_interpreter():
    dirs = site_dirs(sys.executable)
    assert not isinstance(dirs, Unknown) and dirs and all(d.is_dir() for d in dirs)
    assert isinstance(site_dirs("/nonexistent/python"), Unknown)


def test_a_releases_imports_are_kept_between_runs_and_read_again_when_a_file_changes(tmp_path):
    site, kept = _site(tmp_path), tmp_path / "cache"
    first = installed_releases((site,), {"trl": "0.7.9"}, cache_dir=kept)["trl"].imports("0.7.9", "transformers")
    entries = list(kept.iterdir())
    assert len(entries) == 1 and entries[0].name.startswith("trl-0.7.9-")
    # A second run reads the entry, not the files: an entry edited by hand is what it answers.
    entries[0].write_text('[["trl.core", "transformers", "Kept", "top_level"]]')
    again = installed_releases((site,), {"trl": "0.7.9"}, cache_dir=kept)["trl"].imports("0.7.9", "transformers")
    assert [e.name for e in again] == ["Kept"]
    # An edited module is another key: read again, and kept beside.
    (site / "trl" / "core.py").write_text(TRL_CORE + "\nfrom transformers import Trainer\n")
    edited = installed_releases((site,), {"trl": "0.7.9"}, cache_dir=kept)["trl"].imports("0.7.9", "transformers")
    assert {e.name for e in edited} == {e.name for e in first} | {"Trainer"} and len(list(kept.iterdir())) == 2
    # A broken entry is never trusted: read again and rewritten.
    for entry in kept.iterdir():
        entry.write_text("{not json")
    assert installed_releases((site,), {"trl": "0.7.9"}, cache_dir=kept)["trl"].imports("0.7.9", "transformers") == edited
