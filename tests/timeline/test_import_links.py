"""doctor checks the links of the installed set against the API timeline."""

from __future__ import annotations

from compat.judge.checks.import_links import BROKEN, GUARDED, check_import_links
from compat.matrix import load_matrix
from compat.model.findings import Severity, Status
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource, broken_links
from compat.timeline.records import ImportKind
from tests.explain.test_explain import _facts
from tests.support.fixtures import ids
from tests.timeline.api_fixture import write_index


def test_trl_0_7_10_with_transformers_4_39_is_a_broken_link(tmp_path):
    matrix = load_matrix((write_index(tmp_path),))
    (finding,) = check_import_links(_facts({"trl": "0.7.10", "transformers": "4.39.0"}), matrix)
    assert (finding.id, finding.severity, finding.status) == (BROKEN, Severity.ERROR, Status.FOUND)
    assert finding.title == "trl 0.7.10 imports top_k_top_p_filtering from transformers, which transformers 4.39.0 does not have"
    assert "trl.core imports top_k_top_p_filtering from transformers at import time" in finding.cause
    assert "transformers 4.36.2 - 4.38.2 only" in finding.cause
    assert finding.fix.requires == ("trl>=0.8.0",)
    assert finding.fix.commands == ("pip install 'trl>=0.8.0'", "pip install 'transformers<4.39.0'")


def test_a_linked_set_and_unindexed_releases_report_nothing(tmp_path):
    matrix = load_matrix((write_index(tmp_path),))
    assert list(check_import_links(_facts({"trl": "0.7.10", "transformers": "4.38.2"}), matrix)) == []
    assert list(check_import_links(_facts({"trl": "0.8.0", "transformers": "4.39.0"}), matrix)) == []
    assert list(check_import_links(_facts({"trl": "0.7.9", "transformers": "4.39.0"}), matrix)) == []  # not indexed
    unknown = _facts({})
    assert list(check_import_links(type(unknown)(**{**unknown.__dict__, "packages": Unknown(reason="x")}), matrix)) == []


def test_a_guarded_import_is_info_and_only_when_asked_for(tmp_path):
    matrix = load_matrix((write_index(tmp_path),))
    assert list(check_import_links(_facts({"trl": "0.19.0", "vllm": "0.10.2"}), matrix)) == []
    (finding,) = check_import_links(_facts({"trl": "0.19.0", "vllm": "0.10.2"}), matrix, feature_links=True)
    assert (finding.id, finding.severity) == (GUARDED, Severity.INFO)
    assert finding.fix.requires == ("trl>=0.23.0",) and finding.fix.commands[1] == "pip install 'vllm<0.10.2'"


def test_links_say_unknown_where_the_index_cannot(tmp_path):
    source = ApiSource((write_index(tmp_path),))
    assert isinstance(broken_links(source, "trl", "0.7.10", "accelerate", "1.0.0"), Unknown)
    assert isinstance(broken_links(source, "trl", "9.9.9", "transformers", "4.39.0"), Unknown)
    (link,) = broken_links(source, "trl", "0.7.10", "transformers", "4.39.0", frozenset({ImportKind.TOP_LEVEL}))
    assert (link.provider_fix, link.importer_fix, link.key) == ("transformers<4.39.0", "trl>=0.8.0", "transformers:top_k_top_p_filtering")
    # A name no indexed release has (GenerationConfig is not in the fixture) decides nothing.
    assert broken_links(source, "trl", "0.7.10", "transformers", "4.38.2") == ()


def test_doctor_reports_the_broken_link(env, doctor, tmp_path):
    code, report = doctor("--python", env(trl="0.7.10", transformers="4.39.0"), "--matrix", str(write_index(tmp_path)))
    assert BROKEN in ids(report) and code == 1


# The shipped index, read from the real wheels: absences that are not evidence decide nothing.

def test_a_torch_name_the_index_cannot_see_is_unknown_but_a_gone_module_counts():
    source = ApiSource()
    # transformers 4.51.3 imports names that torch defines in C (torch.tensor, dtypes): no false error.
    assert broken_links(source, "transformers", "4.51.3", "torch", "2.5.1", frozenset({ImportKind.TOP_LEVEL})) == ()
    # torch._six is a module, gone since torch 2.0: deepspeed 0.8.0 imports from it unguarded.
    links = broken_links(source, "deepspeed", "0.8.0", "torch", "2.5.1", frozenset({ImportKind.TOP_LEVEL}))
    assert not isinstance(links, Unknown) and "torch._six" in {link.key for link in links}


def test_an_import_with_a_fallback_is_not_broken():
    # accelerate 1.3.0: try transformers.integrations, then transformers.deepspeed (gone in 4.46).
    source = ApiSource()
    links = broken_links(source, "accelerate", "1.3.0", "transformers", "4.51.3")
    assert not isinstance(links, Unknown) and not [x for x in links if x.edge.target == "transformers.deepspeed"]
    # Without the fallback the same absence is a broken import (the index does have the module gone).
    from compat.timeline.links import resolves
    edge = next(e for e in source.imports(source.get("accelerate"), "1.3.0", "transformers") if e.target == "transformers.deepspeed")
    assert resolves(edge, source.get("transformers"), "4.51.3") is False


def test_a_model_module_loaded_on_demand_is_a_warning_and_does_not_rule_out_a_pair():
    from compat.judge.checks.import_links import _finding
    from compat.resolve.links import links_for
    from compat.timeline.links import on_demand

    assert on_demand("vllm.model_executor.models.minicpmo") is not None
    assert on_demand("vllm.transformers_utils.processors.glm4v") is not None
    assert on_demand("transformers.keras_callbacks") is not None and on_demand("transformers.modeling_tf_utils") is not None
    assert on_demand("trl.experimental.async_grpo.packing") is not None
    assert on_demand("trl.core") is None and on_demand("vllm.engine.arg_utils") is None and on_demand("transformers.trainer") is None
    source = ApiSource()
    links = broken_links(source, "vllm", "0.8.5.post1", "transformers", "4.57.6", frozenset({ImportKind.TOP_LEVEL}))
    assert not isinstance(links, Unknown) and links  # the index sees them: WHISPER_ATTENTION_CLASSES, ...
    assert {x.on_demand is not None and not x.breaks_import for x in links} == {True}
    assert links_for(None).broken("vllm", "0.8.5.post1", "transformers", "4.57.6") is None
    finding = _finding(links[0], load_matrix())
    assert finding.id == GUARDED and "loads (loaded only for the model architecture that uses it)" in finding.title


def test_the_shipped_index_finds_exactly_the_trl_0_7_10_link():
    (finding,) = check_import_links(_facts({"trl": "0.7.10", "transformers": "4.39.0"}), load_matrix())
    assert (finding.id, finding.fix.requires) == (BROKEN, ("trl>=0.8.0",))
    assert "transformers 2.6.0 - 4.38.2 only" in finding.cause


def test_names_only_newer_providers_have_are_no_finding_and_no_veto():
    # peft 0.21.2 reaches for transformers v5 APIs (conversion_mapping, core_model_loading) in a module
    # it loads only with v5, and behind version checks: with transformers 4.51.3 nothing is broken.
    from compat.resolve.links import links_for

    source = ApiSource()
    links = broken_links(source, "peft", "0.21.2", "transformers", "4.51.3")
    assert not isinstance(links, Unknown)
    later = [x for x in links if x.key.startswith("transformers.conversion_mapping")]
    assert later and all(x.added_later and not x.breaks_import for x in later)
    assert [f for f in check_import_links(_facts({"peft": "0.21.2", "transformers": "4.51.3"}), load_matrix())
            if "conversion_mapping" in f.title or "core_model_loading" in f.title] == []
    assert links_for(None).broken("peft", "0.21.2", "transformers", "4.51.3") is None
    # A removed name is still the evidence: trl 0.7.10's top_k_top_p_filtering.
    (removed,) = broken_links(source, "trl", "0.7.10", "transformers", "4.39.0", frozenset({ImportKind.TOP_LEVEL}))
    assert removed.breaks_import and not removed.added_later


def test_liger_orpo_trainer_link_is_feature_only_for_lock_and_doctor_alike():
    # liger_kernel/transformers/trainer/orpo_trainer.py imports ORPOTrainer from trl.trainer at its top, but only
    # liger_kernel.transformers.trainer imports that module and nothing imports the package: `import liger_kernel`
    # and trl's own liger paths (chunked_loss, AutoLigerKernelForCausalLM) never load it. trl 0.29 removed ORPOTrainer.
    from compat.resolve.links import links_for
    from compat.timeline.links import on_demand

    assert on_demand("liger_kernel.transformers.trainer.orpo_trainer") is not None
    assert on_demand("liger_kernel.transformers.monkey_patch") is None and on_demand("liger_kernel.chunked_loss.orpo_loss") is None
    # Liger's per-model forwards load with its patches only: NeMo-RL ran liger-kernel 0.5.8 with transformers 4.53.3,
    # whose model modules no longer have the *_INPUTS_DOCSTRING names they import
    assert on_demand("liger_kernel.transformers.model.gemma") is not None
    assert [f for f in check_import_links(_facts({"liger-kernel": "0.5.8", "transformers": "4.53.3"}), load_matrix())
            if f.id == BROKEN] == []
    source = ApiSource()
    for liger, trl in (("0.8.5", "1.16.0"), ("0.7.0", "1.2.0")):
        links = broken_links(source, "liger-kernel", liger, "trl", trl)
        assert not isinstance(links, Unknown)
        (orpo,) = [x for x in links if x.key == "trl.trainer:ORPOTrainer"]
        assert orpo.on_demand is not None and not orpo.breaks_import
        assert links_for(None).broken("liger-kernel", liger, "trl", trl) is None  # the lock accepts the pair
        facts = _facts({"liger-kernel": liger, "trl": trl})
        assert [f for f in check_import_links(facts, load_matrix()) if "ORPOTrainer" in f.title] == []  # doctor too
        (listed,) = [f for f in check_import_links(facts, load_matrix(), feature_links=True) if "ORPOTrainer" in f.title]
        assert (listed.id, listed.severity) == (GUARDED, Severity.INFO)
    # With trl 0.28.0 the name is there: no link at all.
    assert [x for x in broken_links(source, "liger-kernel", "0.8.5", "trl", "0.28.0") if x.key == "trl.trainer:ORPOTrainer"] == []


def test_what_a_provider_lacks_is_read_from_spans_as_resolves_answers_release_by_release():
    # ApiSource.lacking answers from each key's spans over the index (_lacking_indexed); the release-by-release walk
    # it replaced (resolves, and _missing's added_later) must give the same releases, for every import of a few pairs
    # whose answers cover each branch: gone modules, torch's C names, names added later, fallbacks, private names.
    from compat.timeline.links import _lacking_indexed, _missing, resolves

    source = ApiSource()
    checked = differ = 0
    seen: dict[bool, int] = {False: 0, True: 0}
    for importer, provider in (("accelerate", "transformers"), ("liger-kernel", "trl"), ("deepspeed", "torch"),
                               ("peft", "transformers"), ("trl", "vllm")):
        a, b = source.get(importer), source.get(provider)
        edges = {(e.target, e.name, e.kind): e for r in a.releases[::4] for e in a.imports(r, provider)}
        for edge in edges.values():
            for breaking_only in (False, True):
                walked = frozenset(r for r in b.releases if resolves(edge, b, r) is False
                                   and not (breaking_only and _missing(edge, b, r, r)[3]))
                checked += 1
                seen[breaking_only] += len(walked)
                differ += walked != _lacking_indexed(edge, b, breaking_only)
                assert walked == _lacking_indexed(edge, b, breaking_only), (importer, edge, breaking_only)
    assert checked > 200 and differ == 0
    assert seen[False] > seen[True] > 0  # some releases lack a name, and some of those only lack one added later


def test_a_first_question_and_a_repeated_one_give_the_same_links(tmp_path):
    # The first question about a pair walks its imports for the one provider release; from the second on (a lock
    # trying release after release) the releases that may break are computed once: the answers must agree.
    root = write_index(tmp_path)
    for provider_version, count in (("4.39.0", 1), ("4.38.2", 0)):
        once = broken_links(ApiSource((root,)), "trl", "0.7.10", "transformers", provider_version)
        source = ApiSource((root,))
        broken_links(source, "trl", "0.7.10", "transformers", "4.36.2")
        again = broken_links(source, "trl", "0.7.10", "transformers", provider_version)
        assert once == again and len(once) == count
    # The same over the shipped index, for a set whose imports it has read.
    first = broken_links(ApiSource(), "trl", "0.7.10", "transformers", "4.39.0")
    repeated = ApiSource()
    broken_links(repeated, "trl", "0.7.10", "transformers", "4.38.2")
    assert broken_links(repeated, "trl", "0.7.10", "transformers", "4.39.0") == first


def test_a_release_is_in_encoded_spans_as_decoded_spans_say():
    from compat.timeline.index import _covers, decode_spans

    for text in ("0", "0-4", "0-4,7", "2,5-6,9-12"):
        for i in range(14):
            assert _covers(text, i) == any(a <= i <= b for a, b in decode_spans(text))
