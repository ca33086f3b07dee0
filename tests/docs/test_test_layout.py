"""The suite mirrors the package (docs/testing.md): every folder of tests/ is a subpackage of compat/ or
one of the named cross-cutting suites, no test file sits at the top of tests/, and docs/testing.md
names every folder, so a new folder is a decision the docs record."""

from __future__ import annotations

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
COMPAT = ROOT / "compat"
CROSS_CUTTING = {"docs", "fault", "gates", "golden", "machines", "docker"}
"""Suites about the whole program, not one stage (docs/testing.md says why each)."""
OTHER = {
    "top": "the modules at the top of compat/",
}
HELPERS = {"data", "support"}


def _folders(root):
    return {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"}


def test_every_folder_mirrors_a_subpackage_or_is_named():
    subpackages = {p.parent.name for p in COMPAT.glob("*/__init__.py")}
    for folder in sorted(_folders(TESTS) - HELPERS):
        assert folder in subpackages | CROSS_CUTTING | set(OTHER), (
            f"tests/{folder}/ mirrors no compat/ subpackage: move its tests to the stage they cover, or name it in "
            "this test and docs/testing.md"
        )


def test_nested_folders_mirror_nested_subpackages():
    for parent in sorted(_folders(TESTS) & {p.parent.name for p in COMPAT.glob("*/__init__.py")}):
        for folder in sorted(_folders(TESTS / parent) - {"data", "bin"}):
            assert (COMPAT / parent / folder / "__init__.py").is_file(), f"tests/{parent}/{folder}/ mirrors no compat/{parent}/{folder}/"


def test_no_test_file_at_the_top_of_tests():
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_docs_testing_names_every_folder():
    page = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    for folder in sorted(_folders(TESTS) - {"data"}):
        assert f"tests/{folder}/" in page, f"docs/testing.md does not say what tests/{folder}/ holds"
