"""Class members, in-package bases and call signatures in the API timeline: extracted, stored as kinds
added late (a package's index holds them from a release on), and read back with inheritance."""

from __future__ import annotations

import json

from compat.explain.drift import question
from compat.explain.roots import Frame, Raised
from compat.maintain.index import IndexClient
from compat.model.unknown import Unknown
from compat.report.explain import api_text
from compat.sources.http import HttpClient
from compat.timeline.drift import answer
from compat.timeline.extract import extract_module
from compat.timeline.index import load_api, lookup
from compat.timeline.index_check import check_api_dir
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiKind, Drift, Span
from compat.timeline.refresh import refresh_package
from tests.explain.test_explain import _facts

SOURCE = b'''
class Base:
    shared = 1
    def __init__(self, a, /, b, c=1, *args, d, e=2, **kwargs):
        self.state = None
        self.x, self._hidden = 1, 2
    @property
    def size(self):
        return 1
    def run(self, model, inputs, return_outputs=False):
        pass
    @staticmethod
    def make(x, *, y):
        pass
    def _private(self):
        pass

def helper(a, b=2, *, c):
    pass
'''


def test_extract_reads_members_and_signatures_with_kinds_and_defaults():
    info = extract_module(SOURCE, "pkg.base", False)
    assert dict(info.signatures) == {"helper": "a,b=,*,c"}
    (_, cls), = info.classes
    assert cls.members == ("shared", "state", "x", "size", "run", "make")  # private ones left out
    assert dict(cls.signatures) == {
        "__init__": "a,/,b,c=,*args,d,e=,**kwargs",  # self dropped, positional-only kept
        "run": "model,inputs,return_outputs=",
        "make": "x,*,y",  # a staticmethod keeps its first parameter
    }


def _pkg(version: str) -> dict[str, str]:
    new = version != "1.0"
    run = "def run(self, model, inputs, return_outputs=False, num_items_in_batch=None):" if new else \
        "def run(self, model, inputs, return_outputs=False):"
    return {
        "pkg/__init__.py": "from .base import Base\nfrom .child import Child, Wrapped\n",
        "pkg/base.py": f"class Base:\n    def __init__(self):\n        self.state = 1\n    {run}\n        pass\n"
        + ("    def added(self):\n        pass\n" if new else ""),
        "pkg/child.py": "import torch\nfrom .base import Base\nclass Child(Base):\n    def own(self):\n        pass\n"
        "class Wrapped(torch.nn.Module):\n    pass\n",
    }


def _client(index) -> IndexClient:
    return IndexClient(index.url, http=HttpClient(timeout=5.0, backoff=0.01))


def test_members_are_inherited_from_bases_of_the_same_package(api_index, tmp_path):
    for v in ("1.0", "1.1"):
        api_index.add_wheel("trl", v, {k.replace("pkg", "trl"): t.replace("pkg", "trl") for k, t in _pkg(v).items()})
    refresh_package(_client(api_index), "trl", tmp_path / "api" / "trl")
    api = load_api("trl", tmp_path)
    assert not isinstance(api, Unknown)
    assert api.start(ApiKind.MEMBER) == 0  # built with members from its first release
    assert api.present(ApiKind.MEMBER, "trl:Child.own") == (Span(first="1.0", last="1.1"),)
    assert api.present(ApiKind.MEMBER, "trl:Child.state") == (Span(first="1.0", last="1.1"),)  # self.x of the base
    assert api.present(ApiKind.MEMBER, "trl:Child.added") == (Span(first="1.1", last="1.1"),)
    assert api.has(ApiKind.MEMBER, "trl:Child.added", "1.0") is False
    assert api.bases("trl:Wrapped", "1.1") == ("torch.nn.Module",)  # outside the package: not read
    assert api.bases("trl:Child", "1.1") == ("trl:Base",)
    found = lookup(api, "Base.run")
    assert [(m.key, m.present) for m in found.signatures] == [
        ("trl:Base.run[model,inputs,return_outputs=]", (Span(first="1.0", last="1.0"),)),
        ("trl:Base.run[model,inputs,return_outputs=,num_items_in_batch=]", (Span(first="1.1", last="1.1"),)),
    ]
    assert check_api_dir(tmp_path / "api" / "trl", "matrix/api/trl") == []


def test_an_index_built_before_members_says_unknown_until_backfilled(api_index, tmp_path):
    for v in ("1.0", "1.1", "1.2"):
        api_index.add_wheel("trl", v, {k.replace("pkg", "trl"): t.replace("pkg", "trl") for k, t in _pkg(v).items()})
    directory = tmp_path / "api" / "trl"
    refresh_package(_client(api_index), "trl", directory)
    for late in ("member", "base", "signature"):  # as the index was before the late kinds existed
        (directory / f"{late}.json.gz").unlink()
    api = load_api("trl", tmp_path)
    assert not isinstance(api, Unknown)
    assert api.start(ApiKind.MEMBER) is None
    assert isinstance(api.has(ApiKind.MEMBER, "trl:Base.run", "1.2"), Unknown)

    refresh_package(_client(api_index), "trl", directory, backfill=2)
    meta = json.loads((directory / "releases.json").read_text())
    assert meta["releases"] == ["1.0", "1.1", "1.2"] and meta["since"]["member"] == "1.1"
    api = load_api("trl", tmp_path)
    assert not isinstance(api, Unknown)
    assert api.has(ApiKind.MEMBER, "trl:Base.added", "1.2") is True
    why = api.has(ApiKind.MEMBER, "trl:Base.added", "1.0")
    assert isinstance(why, Unknown) and "since 1.1" in why.reason  # not absent: not read
    assert api.present(ApiKind.NAME, "trl:Child") == (Span(first="1.0", last="1.2"),)  # other kinds kept
    # a member present from the first backfilled release on is not "added" there
    assert api.present(ApiKind.MEMBER, "trl:Base.added") == (Span(first="1.1", last="1.2"),)
    assert check_api_dir(directory, "matrix/api/trl") == []


def test_an_override_called_with_more_arguments_names_both_sides(api_index, tmp_path):
    # transformers' Trainer starts calling self.log(logs, start_time) in 1.1; trl's override takes it from 0.2
    for v, sig in (("1.0", "self, logs"), ("1.1", "self, logs, start_time=None")):
        api_index.add_wheel("transformers", v, {
            "transformers/__init__.py": "from .trainer import Trainer\n",
            "transformers/trainer.py": f"class Trainer:\n    def log({sig}):\n        pass\n"})
    for v, sig in (("0.1", "self, logs"), ("0.2", "self, logs, start_time=None")):
        api_index.add_wheel("trl", v, {
            "trl/__init__.py": "from .dpo import DPOTrainer\n",
            "trl/dpo.py": f"from transformers import Trainer\nclass DPOTrainer(Trainer):\n    def log({sig}):\n        pass\n"})
    for package in ("transformers", "trl"):
        refresh_package(_client(api_index), package, tmp_path / "api" / package)
    source = ApiSource((tmp_path,))
    frames = (Frame(file="/venv/lib/python3.11/site-packages/transformers/trainer.py", line=3047, function="_maybe_log",
                    package="transformers"),)
    q = question(Raised(type="TypeError", message="DPOTrainer.log() takes 2 positional arguments but 3 were given", frames=frames, line=1))
    assert q is not None and q.caller == "transformers"
    a = answer(q, _facts({"trl": "0.1", "transformers": "1.1"}), source)
    assert a is not None and (a.drift, a.caller, a.caller_since) == (Drift.CALLEE_TOO_OLD, "transformers", "1.1")
    assert a.fix == ("trl>=0.2", "transformers<1.1")
    assert "transformers<1.1 (transformers releases from before it made this call)" in "\n".join(api_text(a))


def test_cli_backfill_reads_indexed_releases_again(api_index, tmp_path, cli):
    for v in ("1.0", "1.1"):
        api_index.add_wheel("trl", v, {k.replace("pkg", "trl"): t.replace("pkg", "trl") for k, t in _pkg(v).items()})
    out = tmp_path / "api"
    code, _ = cli("matrix", "refresh", "--api", "trl", "--index-url", api_index.url, "--out", str(out))
    assert code == 0
    (out / "trl" / "member.json.gz").unlink()
    (out / "trl" / "base.json.gz").unlink()
    (out / "trl" / "signature.json.gz").unlink()
    code, text = cli("matrix", "refresh", "--api", "trl", "--backfill", "1", "--index-url", api_index.url, "--out", str(out))
    assert code == 0 and "1 extracted now" in text
    assert json.loads((out / "trl" / "releases.json").read_text())["since"] == {"base": "1.1", "member": "1.1", "signature": "1.1"}
