"""lock never pins a pair of releases whose top-level imports do not link (the API timeline)."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest
from packaging.version import Version
from typer.testing import CliRunner

from compat.cli import app
from compat.matrix import load_matrix
from compat.matrix.stacks import StackTable
from compat.resolve import resolve
from compat.timeline.index import encode_spans
from tests.support.facts import make_facts

runner = CliRunner()
BASE = ["--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.11"]


def _write(base, package, releases, tables):
    d = base / "api" / package
    d.mkdir(parents=True)
    meta = {"schema": 1, "package": package, "top_level": [package], "releases": releases,
            "files": [f"{package}-{r}.whl" for r in releases], "missing": {}}
    (d / "releases.json").write_text(json.dumps(meta))
    for stem, table in tables.items():
        (d / f"{stem}.json.gz").write_bytes(gzip.compress(json.dumps(table).encode()))


@pytest.fixture(scope="module")
def overlay(tmp_path_factory):
    """Every shipped release of transformers and trl; top_k_top_p_filtering until 4.38.x, imported at
    top level by trl.core before 0.8.0 (as the real wheels have it)."""
    base = tmp_path_factory.mktemp("api")
    m = load_matrix()
    tf = sorted((str(r.version) for r in m.releases.get("transformers").releases), key=Version)
    trl = sorted((str(r.version) for r in m.releases.get("trl").releases), key=Version)
    had = [i for i, v in enumerate(tf) if Version("3.0.0") <= Version(v) < Version("4.39.0")]
    _write(base, "transformers", tf, {"module": {"transformers": encode_spans(range(len(tf)))},
                                      "name": {"transformers:top_k_top_p_filtering": encode_spans(had)}})
    old = [i for i, v in enumerate(trl) if Version("0.4.0") <= Version(v) < Version("0.8.0")]
    _write(base, "trl", trl, {"module": {"trl": encode_spans(range(len(trl)))},
                              "imports": {"trl.core transformers top_k_top_p_filtering top_level": encode_spans(old)}})
    return str(base)


def test_lock_trl_0_7_10_never_pairs_it_with_a_transformers_lacking_its_import(overlay, tmp_path):
    # The catalog's entry for this failure and the tested stacks deleted: the API timeline alone keeps the pair apart.
    shipped = load_matrix()
    bare = dataclasses.replace(shipped, signatures=tuple(s for s in shipped.signatures if s.id != "trl-top-k-top-p-filtering-import"),
                               stacks=StackTable())
    facts = make_facts(gpus=8)
    # An open range, so that the newest transformers is chosen unless something rules it out.
    target = ["trl==0.7.10", "transformers>=4.38"]
    no_index = resolve(target, facts, dataclasses.replace(bare, roots=(tmp_path,)))
    assert Version(no_index.pin("transformers").version) >= Version("4.39.0")  # without an index: a broken pair
    real = resolve(target, facts, bare)  # the shipped index, read from the real wheels
    assert real.pin("transformers").version == "4.38.2"
    linked = resolve(target, facts, dataclasses.replace(bare, roots=(tmp_path, Path(overlay))))
    assert linked.pin("transformers").version == "4.38.2"
    cli = runner.invoke(app, ["lock", *target, *BASE, "--matrix", overlay])
    assert cli.exit_code == 0, cli.output
    assert "\ntransformers==4.38.2" in cli.stdout


def test_a_pinned_broken_pair_is_a_conflict_with_the_reason(overlay):
    result = runner.invoke(app, ["lock", "trl==0.7.10", "transformers==4.39.0", *BASE, "--matrix", overlay])
    assert result.exit_code == 1
    assert "trl 0.7.10 imports transformers:top_k_top_p_filtering at top level; transformers 4.39.0 does not have it" in result.stderr
    # The way out links too: not a newer transformers (none has it), not trl 0.7.11 (it imports it as well).
    assert result.stderr.rstrip().endswith("use trl >= 0.8.0")
