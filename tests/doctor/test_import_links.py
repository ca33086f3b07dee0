"""doctor checks the links of the installed set against the API timeline."""

from __future__ import annotations

from compat.judge.checks.import_links import BROKEN, GUARDED, check_import_links
from compat.matrix import load_matrix
from compat.matrix.api_index import ImportKind
from compat.matrix.api_links import ApiSource, broken_links
from compat.model.findings import Severity, Status
from compat.model.unknown import Unknown
from tests.doctor.conftest import ids
from tests.explain.api_fixture import write_index
from tests.explain.test_explain import _facts


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


def test_a_guarded_import_is_a_warning(tmp_path):
    matrix = load_matrix((write_index(tmp_path),))
    (finding,) = check_import_links(_facts({"trl": "0.19.0", "vllm": "0.10.2"}), matrix)
    assert (finding.id, finding.severity) == (GUARDED, Severity.WARNING)
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
