"""The API index loader: spans, lazy kinds, Unknown for what is not indexed, validation errors."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from compat.errors import MatrixError
from compat.model.unknown import Unknown
from compat.timeline.index import decode_spans, encode_spans, indexed_packages, load_api
from compat.timeline.index_check import check_api_dir
from compat.timeline.records import ApiKind, ImportEdge, ImportKind, Span


def write(base: Path, package: str, releases: list[str], tables: dict[str, dict[str, str]], **meta) -> Path:
    d = base / "api" / package
    d.mkdir(parents=True)
    doc = {"schema": 1, "package": package, "top_level": [package.replace("-", "_")], "releases": releases,
           "files": [f"{package}-{r}.whl" for r in releases], "missing": {}, **meta}
    (d / "releases.json").write_text(json.dumps(doc))
    for stem, table in tables.items():
        (d / f"{stem}.json.gz").write_bytes(gzip.compress(json.dumps(table).encode()))
    return d


def test_spans_round_trip():
    assert encode_spans([0, 1, 2, 4, 7, 8]) == "0-2,4,7-8"
    assert decode_spans("0-2,4,7-8") == ((0, 2), (4, 4), (7, 8))
    assert encode_spans([]) == ""
    with pytest.raises(ValueError):
        decode_spans("1-")


def test_present_has_and_imports(tmp_path):
    write(tmp_path, "trl", ["0.7.10", "0.8.0", "0.15.2"], {
        "name": {"trl:PPOTrainer": "0-1", "trl:GRPOTrainer": "2"},
        "param": {"trl:GRPOConfig(use_vllm)": "2"},
        "imports": {"trl.core transformers top_k_top_p_filtering top_level": "0-1",
                    "trl.import_utils transformers * guarded": "0-2"},
    })
    api = load_api("trl", tmp_path)
    assert not isinstance(api, Unknown)
    assert api.releases == ("0.7.10", "0.8.0", "0.15.2")
    assert api.present(ApiKind.NAME, "trl:PPOTrainer") == (Span(first="0.7.10", last="0.8.0"),)
    assert api.present(ApiKind.NAME, "trl:Nope") == ()
    assert api.has(ApiKind.NAME, "trl:GRPOTrainer", "0.15.2") is True
    assert api.has(ApiKind.NAME, "trl:GRPOTrainer", "0.8") is False  # same version, other spelling
    assert isinstance(api.has(ApiKind.NAME, "trl:GRPOTrainer", "0.9.0"), Unknown)
    assert api.present(ApiKind.CLI, "trl vllm-serve") == ()  # no cli file: never present
    assert api.imports("0.7.10", "transformers") == (
        ImportEdge(module="trl.core", target="transformers", name="top_k_top_p_filtering", kind=ImportKind.TOP_LEVEL),
        ImportEdge(module="trl.import_utils", target="transformers", name=None, kind=ImportKind.GUARDED),
    )
    assert api.imports("0.15.2", "vllm") == ()
    assert isinstance(api.imports("1.0.0", "transformers"), Unknown)
    assert api.keys(ApiKind.PARAM) == ("trl:GRPOConfig(use_vllm)",)
    assert check_api_dir(tmp_path / "api" / "trl", "matrix/api/trl") == []
    assert indexed_packages(tmp_path) == ("trl",)


def test_not_indexed_is_unknown(tmp_path):
    assert isinstance(load_api("vllm", tmp_path), Unknown)
    assert indexed_packages(tmp_path) == ()


def test_validation_names_file_and_key(tmp_path):
    d = write(tmp_path, "peft", ["0.2.0", "0.1.0"], {
        "name": {"peft:LoraConfig": "0-5", "peft:": "0", "peft:X": "1,0"},
        "imports": {"peft.x transformers Y sideways": "0"},
    })
    (d / "stray.txt").write_text("")
    problems = check_api_dir(d, "matrix/api/peft")
    assert "matrix/api/peft/releases.json: releases: not sorted oldest first without repeats" in problems
    assert "matrix/api/peft/name.json.gz: peft:: malformed key" in problems
    assert any(p.startswith("matrix/api/peft/name.json.gz: peft:LoraConfig: release ranges '0-5'") for p in problems)
    assert any(p.startswith("matrix/api/peft/name.json.gz: peft:X: release ranges") for p in problems)
    assert "matrix/api/peft/imports.json.gz: peft.x transformers Y sideways: malformed key" in problems
    assert "matrix/api/peft/stray.txt: not a file of the API index" in problems


def test_validation_names_every_key_a_whole_table_check_rejects(tmp_path):
    """A sound table passes in one check of all its keys; one that is not is walked key by key, and every bad key
    is named: a range text repeated over keys, a key in the wrong shard, a value that is not a text."""
    d = write(tmp_path, "trl", ["1.0", "2.0"], {
        "name.0": {"trl:A": "0-1", "trl:B": "0-1", "trl:Z": "1"},
        "name.1": {"trl:M": "0", "trl:N": "5", "trl:O": "5", "trl:P": [0]},
    }, shards={"name": ["trl:M"]})
    problems = check_api_dir(d, "matrix/api/trl")
    assert problems == [
        "matrix/api/trl/name.0.json.gz: trl:Z: belongs in shard 1",
        "matrix/api/trl/name.1.json.gz: trl:N: release ranges '5' unsorted, adjacent or past the 2 releases",
        "matrix/api/trl/name.1.json.gz: trl:O: release ranges '5' unsorted, adjacent or past the 2 releases",
        "matrix/api/trl/name.1.json.gz: trl:P: malformed release ranges [0]",
    ]
    write(tmp_path / "sound", "trl", ["1.0", "2.0"], {"name.0": {"trl:A": "0-1", "trl:B": "0-1"}, "name.1": {"trl:M": "1"}},
          shards={"name": ["trl:M"]})
    assert check_api_dir(tmp_path / "sound" / "api" / "trl", "matrix/api/trl") == []


def test_corrupt_files_raise_matrix_errors(tmp_path):
    d = write(tmp_path, "trl", ["1.0.0"], {})
    (d / "name.json.gz").write_bytes(b"not gzip")
    api = load_api("trl", tmp_path)
    with pytest.raises(MatrixError, match=rf"^{re.escape(str(d))}/name.json.gz: unreadable"):  # the overlay's own file
        api.present(ApiKind.NAME, "trl:X")
    (d / "releases.json").write_text('{"schema": 9}')
    with pytest.raises(MatrixError, match="schema: expected 1"):
        load_api("trl", tmp_path)


def test_matrix_validate_checks_the_api_index(tmp_path):
    from compat.maintain.validate import validate_matrix

    write(tmp_path, "trl", ["0.2.0", "0.1.0"], {"name": {"trl:X": "0"}})
    (tmp_path / "api" / "stray.json").write_text("{}")
    result = validate_matrix(base=tmp_path, complete=False, audit_patterns=False)
    assert f"{tmp_path}/api/trl/releases.json: releases: not sorted oldest first without repeats" in result.problems
    assert f"{tmp_path}/api/stray.json: not a package directory of the API index" in result.problems


def test_missing_releases_in_version_order_and_the_text_names_a_few(tmp_path):
    from compat.report.timeline import render_api_lookup
    from compat.timeline.index import lookup

    missing = {f"5.{i}.0": "pending: not extracted yet" for i in range(8, 12)} | {f"4.{i}.0": "pending: x" for i in range(1, 8)}
    write(tmp_path, "trl", ["1.0.0"], {}, missing=missing)
    api = load_api("trl", tmp_path)
    assert list(api.missing)[:2] == ["4.1.0", "4.2.0"] and list(api.missing)[-2:] == ["5.10.0", "5.11.0"]
    text = render_api_lookup(lookup(api, None))
    assert "not indexed: 4.1.0, 4.2.0, 4.3.0, 4.4.0, 4.5.0, 4.6.0, 4.7.0, 5.8.0 and 3 more (--json lists them with why)" in text
