"""The one atomic-write helper: all or nothing, and a failed check leaves the old file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from compat.atomic import RefusedOutput, write_atomic, write_output


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


def test_a_new_file_gets_0666_less_the_umask_not_mkstemps_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "lock.txt", b"x")
        write_output(tmp_path / "out.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "lock.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == 0o644


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "lock.txt"
    path.write_bytes(b"old")
    path.chmod(0o640)
    write_output(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_bytes(b"old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert write_output(link, b"new") == target
    assert link.is_symlink() and target.read_bytes() == b"new"


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "made.txt")
    write_output(link, b"x")
    assert link.is_symlink() and (tmp_path / "made.txt").read_bytes() == b"x"


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "link-to-device"])
def test_anything_but_a_regular_file_is_refused_untouched(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    elif kind == "directory":
        path = tmp_path / "dir"
        path.mkdir()
    elif kind == "device":
        path = Path(os.devnull)
    else:
        path = tmp_path / "null"
        path.symlink_to(os.devnull)
    before = os.lstat(path)
    with pytest.raises(RefusedOutput, match="not a regular file"):
        write_output(path, b"x")
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_read_only_file_is_refused_even_for_root(tmp_path):
    path = tmp_path / "lock.txt"
    path.write_bytes(b"keep")
    path.chmod(0o444)
    with pytest.raises(RefusedOutput, match="read-only"):
        write_output(path, b"x")
    assert path.read_bytes() == b"keep"


def test_the_umask_is_respected_not_assumed(tmp_path):
    old = os.umask(0o077)
    try:
        write_output(tmp_path / "private.txt", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600
