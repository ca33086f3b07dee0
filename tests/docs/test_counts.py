"""Figures the docs state about the data (signatures, packages, releases, site pages) are counted from
the shipped matrix here: adding a signature without updating every doc that counts them fails."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat import api
from compat.judge.diagnose import decided_by_when
from compat.matrix import load_matrix
from compat.model.curation import Validation
from tests.support.matrix import shipped_validation

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.fixture(scope="module")
def validation() -> Validation:
    result = shipped_validation()  # what `compat matrix validate --no-audit` reports
    assert result.ok
    return result


def _claims(pattern: str) -> list[tuple[str, re.Match[str]]]:
    found = []
    for path in PAGES:
        text = " ".join(path.read_text(encoding="utf-8").split())  # a figure may wrap onto the next line
        found += [(path.name, m) for m in re.finditer(pattern, text)]
    return found


SIGNATURE_CLAIMS = (
    r"\b(\d+) signatures\b", r"\bcatalog of (\d+)\b", r"\b(\d+) known failures\b", r"## Signatures \((\d+)\)",
    r"\bcatalog: (\d+) entries\b",
)


@pytest.mark.parametrize("pattern", SIGNATURE_CLAIMS)
def test_every_signature_count_is_the_catalog_size(validation: Validation, pattern: str) -> None:
    for page, m in _claims(pattern):
        assert int(m.group(1)) == validation.signatures, f"{page}: {m.group(0)!r}; the catalog has {validation.signatures}"


def test_signature_counts_are_stated_somewhere() -> None:
    """The patterns above still find the figures (a reworded doc must not silence this test)."""
    assert sum(len(_claims(p)) for p in SIGNATURE_CLAIMS) >= 4


def test_every_package_and_release_count_is_the_matrix(validation: Validation) -> None:
    claims = _claims(r"(?:matrix OK|generated on [\d-]+): (\d+) packages, (\d+) releases\b")
    assert claims
    for page, m in claims:
        assert (int(m.group(1)), int(m.group(2))) == (validation.packages, validation.releases), (
            f"{page}: {m.group(0)!r}; the matrix has {validation.packages} packages, {validation.releases} releases"
        )


def test_site_page_count_is_what_the_site_writes(tmp_path: Path) -> None:
    claims = _claims(r"wrote (\d+) pages")
    assert claims
    written = api.matrix_site(api.SiteRequest(out=tmp_path / "public")).pages
    for page, m in claims:
        assert int(m.group(1)) == written, f"{page}: {m.group(0)!r}; `compat matrix site` writes {written}"


def test_the_count_of_entries_doctor_decides_is_the_catalogs() -> None:
    decided = sum(decided_by_when(sig) for sig in load_matrix().signatures)
    claims = _claims(r"\b(\d+) entries doctor decides\b")
    assert len(claims) >= 2  # doctor.md and explain.md state it
    for page, m in claims:
        assert int(m.group(1)) == decided, f"{page}: {m.group(0)!r}; doctor decides {decided} entries from their `when`"
