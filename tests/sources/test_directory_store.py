"""The named cache entries explain keeps its compiled automata in, over the ones the wheel ships (compat/sources/cache.py)."""

from __future__ import annotations

from compat.sources.cache import DirectoryStore


def test_an_entry_absent_from_the_cache_is_read_from_the_shipped_folder_which_is_never_written(tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "hyperscan-a.db").write_bytes(b"shipped")
    store = DirectoryStore(tmp_path / "cache", shipped=shipped)
    assert store.get("hyperscan-a.db") == b"shipped"
    assert store.get("hyperscan-b.db") is None
    store.put("hyperscan-a.db", b"compiled here")  # the user's cache wins once it holds the entry
    assert store.get("hyperscan-a.db") == b"compiled here"
    assert (shipped / "hyperscan-a.db").read_bytes() == b"shipped"


def test_without_a_shipped_folder_only_the_cache_answers(tmp_path):
    store = DirectoryStore(tmp_path / "cache")
    assert store.get("x") is None
    store.put("x", b"1")
    assert store.get("x") == b"1"
