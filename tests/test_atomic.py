"""The one atomic-write helper: all or nothing, and a failed check leaves the old file."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.atomic import write_atomic


def test_replaces_the_file_and_creates_its_directory(tmp_path):
    path = tmp_path / "a" / "b.txt"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert [p.name for p in path.parent.iterdir()] == ["b.txt"]


def test_a_failing_check_keeps_the_old_bytes_and_no_temporary(tmp_path):
    path = tmp_path / "f.toml"
    path.write_bytes(b"old")
    seen: list[bytes] = []

    def check(tmp: Path) -> None:
        seen.append(tmp.read_bytes())
        raise ValueError("bad")

    with pytest.raises(ValueError):
        write_atomic(path, b"new", check=check)
    assert seen == [b"new"]
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.toml"]


def test_an_unwritable_place_raises_oserror(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError):
        write_atomic(blocker / "under-a-file", b"x")
