"""`compat matrix refresh --api` against a real HTTP index on 127.0.0.1 serving wheels built in the test."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import UsageError
from compat.maintain.index import IndexClient
from compat.model.unknown import Unknown
from compat.sources.http import HttpClient
from compat.timeline.index import load_api
from compat.timeline.index_check import check_api_dir
from compat.timeline.records import ApiKind, ImportEdge, ImportKind, Span
from compat.timeline.refresh import refresh_api, refresh_package

from .conftest import ENTRY_POINTS, transformers_files, trl_files


@pytest.fixture
def served(api_index):
    for v in ("4.38.0", "4.39.0"):
        api_index.add_wheel("transformers", v, transformers_files(v))
    for v in ("0.7.10", "0.16.0"):
        api_index.add_wheel("trl", v, trl_files(v), ENTRY_POINTS)
    api_index.add_sdist("trl", "0.17.0", {**trl_files("0.16.0"), "trl.egg-info/entry_points.txt": ENTRY_POINTS})
    return api_index


def client(index) -> IndexClient:
    return IndexClient(index.url, http=HttpClient(timeout=5.0, backoff=0.01))


def test_refresh_extracts_by_ranges_and_answers(served, tmp_path):
    out = tmp_path / "api"
    outcomes = refresh_api(["trl", "transformers"], out_dir=out, client=client(served), workers=2)
    assert [(o.package, o.releases, o.added, o.missing) for o in outcomes] == [("transformers", 2, 2, 0), ("trl", 3, 3, 0)]
    wheel_bytes = sum(len(b) for f, b in served.files.items() if f.endswith(".whl"))
    # the padding is never read: a small part of the wheels crossed the wire
    assert served.sent(".whl") < wheel_bytes / 10
    assert served.requests(".tar.gz") == 1  # an sdist-only release is downloaded whole

    tf = load_api("transformers", tmp_path)
    assert not isinstance(tf, Unknown)
    assert tf.releases == ("4.38.0", "4.39.0")
    assert tf.present(ApiKind.NAME, "transformers:top_k_top_p_filtering") == (Span(first="4.38.0", last="4.38.0"),)
    assert tf.present(ApiKind.NAME, "transformers.generation:top_k_top_p_filtering") == (Span(first="4.38.0", last="4.38.0"),)
    assert tf.has(ApiKind.NAME, "transformers:Trainer", "4.39.0") is True
    assert tf.has(ApiKind.NAME, "transformers:LlamaConfig", "4.39.0") is True
    # a class re-exported by the package is keyed under it; its dataclass fields are its parameters
    assert tf.present(ApiKind.PARAM, "transformers:Trainer(tokenizer)") == (Span(first="4.38.0", last="4.38.0"),)
    assert tf.has(ApiKind.PARAM, "transformers:Trainer(processing_class)", "4.39.0") is True
    assert tf.has(ApiKind.PARAM, "transformers:Trainer.train(resume_from_checkpoint)", "4.39.0") is True
    assert tf.has(ApiKind.PARAM, "transformers:Trainer.train(**)", "4.39.0") is True
    assert tf.has(ApiKind.PARAM, "transformers:TrainingArguments(learning_rate)", "4.39.0") is True
    assert tf.has(ApiKind.PARAM, "transformers:TrainingArguments(framework)", "4.39.0") is False  # ClassVar
    assert tf.has(ApiKind.PARAM, "transformers:TrainingArguments(_n_gpu)", "4.39.0") is False  # init=False
    assert tf.keys(ApiKind.MODEL_TYPE) == ("llama", "qwen2", "qwen3")
    assert tf.present(ApiKind.MODEL_TYPE, "qwen3") == (Span(first="4.39.0", last="4.39.0"),)
    edges = tf.imports("4.39.0", "accelerate")
    assert edges == (
        ImportEdge(module="transformers.trainer", target="accelerate", name=None, kind=ImportKind.GUARDED),
        ImportEdge(module="transformers.trainer", target="accelerate", name="Accelerator", kind=ImportKind.GUARDED),
    )
    assert tf.imports("4.39.0", "peft") == (
        ImportEdge(module="transformers.trainer", target="peft", name="PeftModel", kind=ImportKind.LAZY),
    )

    trl = load_api("trl", tmp_path)
    assert not isinstance(trl, Unknown)
    assert trl.releases == ("0.7.10", "0.16.0", "0.17.0")
    assert trl.files[-1] == "trl-0.17.0.tar.gz"
    assert trl.present(ApiKind.CLI, "trl vllm-serve") == (Span(first="0.16.0", last="0.17.0"),)
    assert trl.present(ApiKind.CLI, "trl sft") == (Span(first="0.7.10", last="0.17.0"),)
    # fields inherited from a base in another package: "**" says the list is not complete
    assert trl.has(ApiKind.PARAM, "trl:GRPOConfig(use_vllm)", "0.16.0") is True
    assert trl.has(ApiKind.PARAM, "trl:GRPOConfig(**)", "0.16.0") is True
    assert trl.has(ApiKind.PARAM, "trl:PPOTrainer.step(scores)", "0.7.10") is True
    assert trl.imports("0.7.10", "transformers") == (
        ImportEdge(module="trl.core", target="transformers", name="top_k_top_p_filtering", kind=ImportKind.TOP_LEVEL),
        ImportEdge(module="trl.core", target="transformers.generation", name="GenerationMixin", kind=ImportKind.TOP_LEVEL),
        ImportEdge(module="trl.trainer.grpo_config", target="transformers", name="TrainingArguments", kind=ImportKind.TOP_LEVEL),
    )
    assert [e.name for e in trl.imports("0.16.0", "transformers")] == ["TrainingArguments"]
    assert isinstance(trl.imports("0.8.0", "transformers"), Unknown)
    for name in ("trl", "transformers"):
        assert check_api_dir(out / name, f"matrix/api/{name}") == []


def test_second_refresh_fetches_nothing_known_and_adds_new_releases(served, tmp_path):
    out = tmp_path / "api"
    refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    before = {p.name: p.read_bytes() for p in (out / "trl").iterdir()}
    served.log.clear()
    (again,) = refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert (again.added, again.releases) == (0, 3)
    assert [path for path, _, _ in served.log] == ["/simple/trl/"]
    assert {p.name: p.read_bytes() for p in (out / "trl").iterdir()} == before  # byte-identical
    served.add_wheel("trl", "0.7.11", trl_files("0.7.10"), ENTRY_POINTS)
    served.log.clear()
    (grown,) = refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert (grown.added, grown.releases) == (1, 4)
    assert all("0.7.11" in path for path, _, _ in served.log if "/files/" in path)
    trl = load_api("trl", tmp_path)
    assert trl.releases == ("0.7.10", "0.7.11", "0.16.0", "0.17.0")
    assert trl.imports("0.7.11", "transformers") == trl.imports("0.7.10", "transformers")
    assert trl.present(ApiKind.MODULE, "trl.core") == (Span(first="0.7.10", last="0.17.0"),)


def test_unchanged_members_are_not_fetched_again(served, tmp_path):
    served.add_wheel("trl", "0.7.11", trl_files("0.7.10"), ENTRY_POINTS)
    out = tmp_path / "api"
    refresh_package(client(served), "trl", out / "trl", workers=1, limit=2)  # 0.16.0 and 0.17.0
    served.log.clear()
    refresh_package(client(served), "trl", out / "trl", workers=1)
    # 0.7.10's modules are read one range each (padding lies between them); 0.7.11 has the same
    # members: only the end of the file (central directory and entry points) is read
    assert served.requests("0.7.10") == 1 + len(trl_files("0.7.10"))
    assert served.requests("0.7.11") == 1
    assert load_api("trl", tmp_path).releases == ("0.7.10", "0.7.11", "0.16.0", "0.17.0")


def test_release_without_a_readable_file_is_recorded_as_missing(served, tmp_path):
    served.files["trl-0.18.0-py3-none-any.whl"] = b"not a zip at all" * 10
    out = tmp_path / "api"
    (outcome,) = refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert outcome.missing == 1
    trl = load_api("trl", tmp_path)
    assert "0.18.0" not in trl.releases
    unknown = trl.has(ApiKind.NAME, "trl:GRPOConfig", "0.18.0")
    assert isinstance(unknown, Unknown) and "not a zip file" in unknown.reason
    served.log.clear()
    refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert served.requests("/files/") == 0  # a release recorded as missing is not tried again


def test_unknown_package_and_broken_index_are_usage_errors(served, tmp_path):
    with pytest.raises(UsageError, match="no API index for: xformers"):
        refresh_api(["xformers"], out_dir=tmp_path, client=client(served))
    broken = tmp_path / "trl"
    broken.mkdir()
    (broken / "releases.json").write_text('{"schema": 1, "package": "trl", "releases": ["2", "1"], "files": ["a", "b"]}')
    with pytest.raises(UsageError, match="cannot extend a broken API index"):
        refresh_package(client(served), "trl", broken)


def test_cli_refresh_then_query(served, tmp_path):
    out = tmp_path / "api"
    runner = CliRunner()
    result = runner.invoke(app, ["matrix", "refresh", "--api", "trl", "transformers", "--index-url", served.url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "trl: 3 releases indexed, 3 extracted now, 0 not indexed" in result.output
    result = runner.invoke(app, ["matrix", "api", "transformers", "top_k_top_p_filtering", "--matrix", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["package"], doc["name"], doc["kind"]) == ("transformers", "transformers:top_k_top_p_filtering", "name")
    assert doc["present"] == [{"first": "4.38.0", "last": "4.38.0"}]
    assert doc["elsewhere"] == [{"kind": "name", "name": "transformers.generation:top_k_top_p_filtering",
                                 "present": [{"first": "4.38.0", "last": "4.38.0"}]}]
    result = runner.invoke(app, ["matrix", "api", "transformers", "Trainer(tokenizer)", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[1] == "transformers:Trainer(tokenizer)  [parameter]: 4.38.0"
    result = runner.invoke(app, ["matrix", "api", "trl", "cli:vllm-serve", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[1] == "trl vllm-serve  [command]: 0.16.0 .. 0.17.0"
    result = runner.invoke(app, ["matrix", "api", "transformers", "model_type:qwen3", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[1] == "qwen3  [model type]: 4.39.0"
    result = runner.invoke(app, ["matrix", "api", "transformers", "no_such_name", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[1] == "transformers:no_such_name  [name]: in no indexed release"
    result = runner.invoke(app, ["matrix", "api", "trl==0.7.10", "--imports", "transformers", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[:2] == [
        "trl 0.7.10 imports from transformers:",
        "  trl.core: from transformers import top_k_top_p_filtering  (top-level)",
    ]
    result = runner.invoke(app, ["matrix", "api", "trl==0.7.10", "--imports", "transformers", "--matrix", str(tmp_path), "--json"])
    assert json.loads(result.output)["imports"][0] == {
        "kind": "top_level", "module": "trl.core", "name": "top_k_top_p_filtering", "target": "transformers"}
    result = runner.invoke(app, ["matrix", "api", "trl==0.9.0", "--imports", "transformers", "--matrix", str(tmp_path), "--json"])
    assert "trl 0.9.0 is not indexed" in json.loads(result.output)["unknown"]
    result = runner.invoke(app, ["matrix", "api", "trl", "--matrix", str(tmp_path)])
    assert result.output.splitlines()[0] == "trl: 3 releases indexed (0.7.10 .. 0.17.0)"
    result = runner.invoke(app, ["matrix", "api", "trl", "--matrix", str(tmp_path), "--json"])
    assert json.loads(result.output)["keys"]["cli"] == 3
    result = runner.invoke(app, ["matrix", "api", "trl", "--imports", "transformers", "--matrix", str(tmp_path)])
    assert isinstance(result.exception, UsageError) and "--imports needs a release" in str(result.exception)
    result = runner.invoke(app, ["matrix", "api", "xformers", "--matrix", str(tmp_path)])
    assert isinstance(result.exception, UsageError) and "xformers has no API index" in str(result.exception)
    result = runner.invoke(app, ["matrix", "api", "trl>=1", "--matrix", str(tmp_path)])
    assert isinstance(result.exception, UsageError)
    result = runner.invoke(app, ["matrix", "api", "trl=>1", "--matrix", str(tmp_path)])
    assert isinstance(result.exception, UsageError)


def test_refresh_needs_an_index(tmp_path, monkeypatch):
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    result = CliRunner().invoke(app, ["matrix", "refresh", "--api", "trl", "--out", str(tmp_path)])
    assert isinstance(result.exception, UsageError) and "no package index" in str(result.exception)


def test_large_tables_are_sharded_and_still_answer(served, tmp_path, monkeypatch):
    from compat.timeline import refresh as api_refresh

    monkeypatch.setattr(api_refresh._Timeline, "shard_bytes", 200)
    out = tmp_path / "api"
    refresh_api(["transformers"], out_dir=out, client=client(served), workers=2)
    meta = json.loads((out / "transformers" / "releases.json").read_text())
    assert len(meta["shards"]["param"]) >= 1
    assert (out / "transformers" / "param.1.json.gz").is_file() and not (out / "transformers" / "param.json.gz").exists()
    assert check_api_dir(out / "transformers", "matrix/api/transformers") == []
    tf = load_api("transformers", tmp_path)
    assert tf.present(ApiKind.PARAM, "transformers:Trainer(tokenizer)") == (Span(first="4.38.0", last="4.38.0"),)
    assert "transformers:TrainingArguments(learning_rate)" in tf.keys(ApiKind.PARAM)
    # a shard file gone or a key in the wrong shard is named by validation
    (out / "transformers" / "param.0.json.gz").rename(out / "transformers" / "param.9.json.gz")
    problems = check_api_dir(out / "transformers", "matrix/api/transformers")
    assert "matrix/api/transformers/param.0.json.gz: missing shard" in problems
    assert "matrix/api/transformers/param.9.json.gz: not a file of the API index" in problems
    # extending the index re-reads the shards, and un-splits them when the limit allows
    monkeypatch.setattr(api_refresh._Timeline, "shard_bytes", 1_000_000)
    (out / "transformers" / "param.9.json.gz").rename(out / "transformers" / "param.0.json.gz")
    served.add_wheel("transformers", "4.40.0", transformers_files("4.40.0"))
    (grown,) = refresh_api(["transformers"], out_dir=out, client=client(served), workers=2)
    assert grown.added == 1 and not (out / "transformers" / "param.0.json.gz").exists()
    tf = load_api("transformers", tmp_path)
    assert tf.present(ApiKind.PARAM, "transformers:Trainer(processing_class)") == (Span(first="4.39.0", last="4.40.0"),)


def test_pending_releases_are_tried_again(served, tmp_path):
    out = tmp_path / "api"
    refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    meta_path = out / "trl" / "releases.json"
    # a release that could not be read is settled; one recorded as pending is tried again
    served.add_wheel("trl", "0.16.1", trl_files("0.16.0"), ENTRY_POINTS)
    served.files["trl-0.16.1-py3-none-any.whl"] = served.files["trl-0.16.1-py3-none-any.whl"][:100]
    refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert "0.16.1" in json.loads(meta_path.read_text())["missing"]
    meta = json.loads(meta_path.read_text())
    meta["missing"]["0.16.1"] = "pending: not extracted yet"
    meta_path.write_text(json.dumps(meta))
    served.add_wheel("trl", "0.16.1", trl_files("0.16.0"), ENTRY_POINTS)
    (again,) = refresh_api(["trl"], out_dir=out, client=client(served), workers=2)
    assert again.added == 1 and "0.16.1" in load_api("trl", tmp_path).releases


def test_parameters_hold_across_a_change_of_the_exposing_module():
    from compat.timeline.combine import ReleaseApi
    from compat.timeline.refresh import _Timeline

    timeline = _Timeline("deepspeed")
    for release, keyed_under in (("0.9.2", "deepspeed.runtime.config_utils"), ("0.9.3", "deepspeed.compression.config")):
        api = ReleaseApi()
        api.keys[ApiKind.NAME] = {"deepspeed.runtime.config_utils:get_list_param", "deepspeed.compression.config:get_list_param"}
        if release == "0.9.2":
            api.keys[ApiKind.NAME].discard("deepspeed.compression.config:get_list_param")
        api.keys[ApiKind.PARAM] = {f"{keyed_under}:get_list_param(param_default_value)"}
        timeline.add(release, f"deepspeed-{release}.tar.gz", api)
    timeline.join_param_families()
    params = timeline.tables["param"]
    assert params["deepspeed.runtime.config_utils:get_list_param(param_default_value)"] == {"0.9.2", "0.9.3"}
    # the other module did not expose it in 0.9.2: its key does not claim that release
    assert params["deepspeed.compression.config:get_list_param(param_default_value)"] == {"0.9.3"}
