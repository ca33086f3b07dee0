"""The renderers moved out of the CLI: matrix show, validate and refresh."""

from __future__ import annotations

import json
from pathlib import Path

from compat.matrix._toml import Table
from compat.matrix.releases import PackageReleases, parse_release
from compat.model.curation import Validation
from compat.report.matrix import (
    SCHEMA_VERSION,
    render_releases_json,
    render_releases_table,
    render_validation_ok,
    render_validation_problems,
)
from tests.support.golden import check_golden
from tests.support.paths import DATA


def _package() -> PackageReleases:
    rows = [
        {"version": "0.7.1", "uploaded": "2025-01-27", "requires": ["torch==2.5.1", 'xformers==0.0.28.post3; platform_system == "Linux"']},
        {"version": "0.7.2", "uploaded": "2025-02-06", "requires": ["torch==2.5.1"], "yanked": True, "yanked_reason": "bad wheel"},
        {"version": "0.7.3", "requires_unknown": "sdist-only"},
    ]
    return PackageReleases(package="vllm", releases=tuple(parse_release(Table(r, file="t.toml", path=f"release[{i}]")) for i, r in enumerate(rows)))


def test_show_json_is_versioned_sorted_and_oldest_first():
    doc = json.loads(render_releases_json(_package()))
    assert doc["schema_version"] == SCHEMA_VERSION == 1
    assert [r["version"] for r in doc["releases"]] == ["0.7.1", "0.7.2", "0.7.3"]
    assert doc["releases"][1]["yanked_reason"] == "bad wheel"
    assert doc["releases"][2]["requires"] is None and doc["releases"][2]["requires_unknown"] == "sdist-only"
    assert doc["releases"][0]["uploaded"] == "2025-01-27" and doc["releases"][2]["uploaded"] is None


def test_show_table_is_newest_first_and_filters_by_since():
    text = render_releases_table(_package(), since="0.7.2")
    assert text.index("0.7.3") < text.index("0.7.2") and "0.7.1" not in text
    assert "yanked: bad wheel" in text and "requirements unknown (sdist-only)" in text
    assert text.endswith("* = only under an environment marker (see --json)\n")


def test_validation_text():
    roots = (Path("matrix"),)
    ok = Validation(roots=roots, problems=(), packages=17, releases=1300, signatures=90)
    assert render_validation_problems(ok) == ""
    assert render_validation_ok(ok) == "matrix OK: 17 packages, 1300 releases, 90 signatures (matrix)\n"
    bad = Validation(roots=roots, problems=("matrix/gpus.toml: gpu[1].name: missing",), packages=0, releases=0, signatures=0)
    assert render_validation_problems(bad) == "compat: error: matrix/gpus.toml: gpu[1].name: missing\n1 problem(s) in matrix\n"


GOLDEN = DATA / "golden"


def test_show_renderers_match_their_golden_files():
    # Regenerate after an intended change: write render_releases_table/json(_package()) over these files.
    check_golden(GOLDEN / "matrix-show.txt", render_releases_table(_package()))
    check_golden(GOLDEN / "matrix-show.json", render_releases_json(_package()))
