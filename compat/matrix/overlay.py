"""What a `--matrix DIR` overlay may hold, checked before anything in it is read.

An overlay the loader reads only in part used to pass in silence: `signature/` for `signatures/`, a `cuda.toml/`
directory, a `releases` file where a folder belongs, or a `.json` release list were skipped, and the company's
rules they held were never applied, with nothing said. Each is now a one-line MatrixError naming the path.
"""

from __future__ import annotations

from pathlib import Path

from compat.errors import MatrixError
from compat.matrix import TABLE_FILES

FILES = frozenset({*TABLE_FILES, "log-lines.toml"})
"""The single files read from a matrix root: the loader's tables, and the real log lines curation checks."""
FOLDERS = {"signatures": ".toml", "releases": ".toml", "api": ""}
"""The folders it reads, and the suffix of each file in them ("" for api/, whose entries are package folders,
checked by compat.timeline.index_check)."""


def _ignored(name: str) -> bool:
    # Notes and version control beside the data: README.md, LICENSE, .git, .gitignore.
    return name.startswith(".") or name.lower().endswith((".md", ".txt", ".rst")) or name.upper().startswith("LICENSE")


def overlay_problems(root: Path) -> list[MatrixError]:
    """Every entry of the overlay `root` the loader would skip or misread: unknown names and wrong types."""
    problems: list[MatrixError] = []
    try:
        entries = sorted(root.iterdir())
    except OSError as exc:
        return [MatrixError(str(root), "", f"cannot list: {exc.strerror or exc}")]
    for entry in entries:
        name = entry.name
        if name in FILES:
            if not entry.is_file():
                problems.append(MatrixError(str(entry), "", "not a regular file (a matrix file is TOML)"))
        elif name in FOLDERS:
            if entry.is_dir():
                problems.extend(_folder_problems(entry, FOLDERS[name]))
            else:
                problems.append(MatrixError(str(entry), "", "not a directory (a matrix folder)"))
        elif not _ignored(name):
            known = ", ".join([*sorted(FILES), *(f"{f}/" for f in FOLDERS)])
            problems.append(MatrixError(str(entry), "", f"not part of a matrix overlay (known: {known})"))
    return problems


def _folder_problems(folder: Path, suffix: str) -> list[MatrixError]:
    if not suffix:
        return []
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        return [MatrixError(str(folder), "", f"cannot list: {exc.strerror or exc}")]
    return [
        MatrixError(str(entry), "", f"not a {suffix} file (only *{suffix} files are read in {folder.name}/)")
        for entry in entries
        if not _ignored(entry.name) and not entry.name.endswith(suffix)  # a FIFO or folder named *.toml: the reader's refusal
    ]


def check_overlay(root: Path) -> None:
    """Raise the first of `overlay_problems(root)`, if any."""
    problems = overlay_problems(root)
    if problems:
        raise problems[0]
