"""A `--matrix DIR` overlay holding what the loader does not read: a one-line error naming the path, in every
command and in `compat matrix validate`. Such entries (a misspelt `signature/`, a `cuda.toml/` folder, a
`releases` file, a `.yaml` signature file) were skipped in silence, and the rules they held never applied."""

from __future__ import annotations

import pytest

from compat.matrix.overlay import overlay_problems
from tests.fault.fakes import one_line_error
from tests.support.main import compat_main

CASES = {
    "unknown-folder": (lambda root: (root / "signature").mkdir(), "signature: not part of a matrix overlay"),
    "unknown-file": (lambda root: (root / "rules.toml").write_text("x = 1\n"), "rules.toml: not part of a matrix overlay"),
    "file-as-folder": (lambda root: (root / "releases").write_text(""), "releases: not a directory"),
    "folder-as-file": (lambda root: (root / "cuda.toml").mkdir(), "cuda.toml: not a regular file"),
    "wrong-suffix": (
        lambda root: ((root / "signatures").mkdir(), (root / "signatures" / "mine.yaml").write_text("")),
        "signatures/mine.yaml: not a .toml file",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_overlay_entry_the_loader_would_skip_is_a_one_line_error(tmp_path, case):
    make, says = CASES[case]
    root = tmp_path / "overlay"
    root.mkdir()
    make(root)
    (tmp_path / "train.log").write_text("RuntimeError: CUDA error: no kernel image is available\n")
    for args in (["doctor", "--gpus", "cpu", "--no-config"], ["explain", str(tmp_path / "train.log"), "--no-env"]):
        result = compat_main(*args, "--matrix", str(root))
        assert result.returncode == 2, result
        assert f"{root}/{says}" in one_line_error(result)
    validated = compat_main("matrix", "validate", str(root), "--no-audit")  # the layout, not the patterns
    assert validated.returncode == 2 and says in validated.stderr.decode()


def test_notes_and_version_control_beside_an_overlay_are_not_problems(tmp_path):
    for name in ("README.md", ".git", "LICENSE", "NOTES.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "signatures").mkdir()
    (tmp_path / "signatures" / "ours.toml").write_text("")
    (tmp_path / "signatures" / "README.md").write_text("")
    assert overlay_problems(tmp_path) == []
