"""The compiled matrix: parsed once, read back under the hash of everything it came from, never trusted when broken."""

from __future__ import annotations

import shutil

import pytest

from compat.errors import MatrixError
from compat.matrix import load_matrix, shipped_matrix_dir
from compat.matrix.compiled import matrix_key


@pytest.fixture
def copy(tmp_path):
    root = tmp_path / "matrix"
    shutil.copytree(shipped_matrix_dir(), root, ignore=shutil.ignore_patterns("releases", "api"))
    (root / "releases").mkdir()
    return root


def _entries(cache):
    return sorted((cache / "matrix").glob("*.pickle"))


def test_the_second_load_reads_the_entry_and_gives_the_same_matrix(copy, tmp_path):
    cache = tmp_path / "cache"
    first = load_matrix(base=copy, cache_dir=cache)
    (entry,) = _entries(cache)
    second = load_matrix(base=copy, cache_dir=cache)
    assert second.signatures == first.signatures and second.torch == first.torch and second.stacks == first.stacks
    assert second.releases is not None and second.releases.get("trl") is None  # a fresh lazy index, not pickled
    assert _entries(cache) == [entry]


def test_any_change_to_a_curated_file_or_an_overlay_is_a_new_key(copy, tmp_path):
    before = matrix_key((copy,))
    sig = next((copy / "signatures").glob("*.toml"))
    sig.write_text(sig.read_text() + "\n# a comment\n")
    assert matrix_key((copy,)) != before
    overlay = tmp_path / "overlay"
    (overlay / "signatures").mkdir(parents=True)
    assert matrix_key((copy, overlay)) != matrix_key((copy,))


def test_a_broken_entry_is_rebuilt_not_trusted(copy, tmp_path):
    cache = tmp_path / "cache"
    good = load_matrix(base=copy, cache_dir=cache)
    (entry,) = _entries(cache)
    for junk in (b"", b"not a pickle", b"\x80\x05K\x01."):  # the last one unpickles to an int
        entry.write_bytes(junk)
        assert load_matrix(base=copy, cache_dir=cache).signatures == good.signatures
    assert entry.read_bytes() not in (b"", b"not a pickle", b"\x80\x05K\x01.")


def test_a_matrix_error_is_raised_with_a_cache_as_without(copy, tmp_path):
    (copy / "cuda.toml").write_text("this is = = not toml")
    with pytest.raises(MatrixError, match=r"cuda\.toml"):
        load_matrix(base=copy, cache_dir=tmp_path / "cache")


def test_an_unwritable_cache_only_costs_speed(copy, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    assert load_matrix(base=copy, cache_dir=blocker).signatures


def test_the_shipped_entry_is_read_where_it_was_compiled_from_the_same_files_and_never_else(copy, tmp_path):
    from compat.matrix.compiled import SHIPPED, load_shipped, write_shipped

    write_shipped(copy, copy / SHIPPED)
    built = load_matrix(base=copy)  # no cache: the shipped entry answers, with the roots it is read from
    assert built.roots == (copy,) and built.releases is not None
    moved = tmp_path / "elsewhere"
    shutil.move(str(copy), moved)  # installed anywhere: the key leaves out where
    again = load_shipped((moved,), lambda: None)
    assert again is not None and again.roots == (moved,) and again.signatures == built.signatures
    assert load_shipped((moved, tmp_path), lambda: None) is None  # an overlay: compiled afresh
    sig = next((moved / "signatures").glob("*.toml"))
    sig.write_text(sig.read_text() + "\n# edited after the build\n")
    assert load_shipped((moved,), lambda: None) is None
    for junk in (b"", b"not a pickle", b"\x80\x05K\x01."):
        (moved / SHIPPED).write_bytes(junk)
        assert load_shipped((moved,), lambda: None) is None
    assert load_matrix(base=moved, cache_dir=tmp_path / "cache").signatures == built.signatures
