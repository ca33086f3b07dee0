"""`compat matrix validate` on a broken copy of the shipped matrix: each problem names its file and key."""

from __future__ import annotations

import re
import shutil

import pytest

from compat.maintain.validate import validate_matrix
from compat.matrix import shipped_matrix_dir

SIGNATURE = """
[[signature]]
id = "acme-bad-fix"
title = "t"
severity = "error"
patterns = ["acme boom"]
when = { packages = { vllm = "" } }
fix = { requires = ["vllm @@ 1"] }
cause = "c"
refs = ["acme/repo#1"]
"""

EXTENSION = """
[[extension]]
package = "inhouse-kernels"
source = "trust me"

[[extension.release]]
versions = ["1.0"]
torch = ">=2.0"
python = ">=3.9"
cuda_majors = [12]
source = "acme/kernels#1"
"""

BUILDS = """
[[package]]
name = "inhouse-kernels"
source = "acme/kernels#1"

[[package.release]]
versions = ["1.0"]
default_cuda = "12.1"
source = "acme/kernels#2"

[[package.release.build]]
cuda = "11.8"
torch_index = true
python = ">=3.9"
source = "acme/kernels#3"
"""


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    base = tmp_path_factory.mktemp("m") / "matrix"
    shutil.copytree(shipped_matrix_dir(), base)
    (base / "gpus.toml").unlink()
    (base / "releases" / "trl.toml").unlink()
    shutil.copy(base / "releases" / "datasets.toml", base / "releases" / "Datasets.toml")
    ext = (base / "extensions.toml").read_text()
    assert 'versions = ["0.2.1", ' in ext
    ext = ext.replace('versions = ["0.2.1", ', 'versions = ["0.0.1", "0.2.1", ', 1)
    (base / "extensions.toml").write_text(ext + EXTENSION)
    builds = (base / "builds.toml").read_text()
    assert 'versions = ["0.2.2", ' in builds and 'source = "vllm-project/vllm#10319' in builds
    builds = builds.replace('versions = ["0.2.2", ', 'versions = ["0.0.9", "0.2.2", ', 1)
    builds = re.sub(r'source = "vllm-project/vllm#10319[^"]*"', 'source = "a blog post"', builds, count=1)
    (base / "builds.toml").write_text(builds + BUILDS)
    (base / "signatures" / "acme.toml").write_text(SIGNATURE)
    found = validate_matrix(base=base, audit_patterns=False)
    # Outside the shipped directory, problems are labelled with full paths.
    return tuple(p.removeprefix(f"{base}/") for p in found.problems)


def test_missing_files_are_named(result):
    assert "gpus.toml: missing" in result
    assert any(p.startswith("releases/trl.toml: missing: every tracked package") for p in result)


def test_a_releases_file_must_use_the_canonical_name(result):
    assert "releases/Datasets.toml: file name must be the canonical name (datasets.toml)" in result


def test_extensions_must_point_at_recorded_releases_and_name_sources(result):
    text = "\n".join(result)
    assert "extensions.toml: extension[flash-attn].release[0].versions: 0.0.1 is not a recorded flash-attn release" in text
    assert "extensions.toml: extension[inhouse-kernels].package: not a tracked package" in text
    assert "extensions.toml: extension[inhouse-kernels].source: source 'trust me' names no issue/PR, URL or release metadata" in text


def test_builds_must_point_at_recorded_releases_of_tracked_packages_and_name_sources(result):
    text = "\n".join(result)
    assert "builds.toml: package[vllm].release[0].versions: 0.0.9 is not a recorded vllm release" in text
    assert "builds.toml: package[vllm].release[1].build[0].source: source 'a blog post' names no issue/PR" in text
    assert "builds.toml: package[inhouse-kernels].name: not a tracked package" in text


def test_a_fix_that_is_not_a_requirement_is_caught_by_the_loader(result):
    text = "\n".join(result)
    assert "signatures/acme.toml: signature[0].fix.requires[0]: 'vllm @@ 1' is not a PEP 508 requirement" in text


def test_nothing_else_is_reported(result):
    expected = ("gpus.toml", "releases/trl.toml", "releases/Datasets.toml", "extensions.toml", "builds.toml", "signatures/acme.toml")
    assert [p for p in result if not p.startswith(expected)] == []


def test_a_base_that_is_not_a_directory(tmp_path):
    result = validate_matrix(base=tmp_path / "nope", audit_patterns=False)
    assert result.problems[0] == f"{tmp_path / 'nope'}: not a directory"
