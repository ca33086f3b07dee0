"""The README and docs are tests: every fenced block that shows `$ compat ...` runs here, against the
shipped matrix, declared hardware and files of this repository (no network, no GPU), and its output
must be what the doc shows.

A block's expected output may elide: a line `...` stands for any lines, and `...` inside a line for
any text (as doctest's ELLIPSIS). A block that cannot run here is marked in the markdown, on the line
before it, with `<!-- doc-test: skip (the reason) -->`; an unmarked block that fails, fails here.
A block that activates an environment is given a fake one (tests/support/fakeenv.py: dist-info folders,
no code) by `<!-- doc-test: env (~/proj/.venv torch==2.6.0 vllm==0.7.2) -->`, with the home
directory shown as /home/me.
`COMPAT_UPDATE_GOLDEN=1` (as tests/golden) rewrites a drifted block with the output it gives now:
read the diff, and put back the elisions worth keeping.
"""

from __future__ import annotations

import os
import platform
import random
import re
import shlex
import shutil
import string
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fakeenv import make_env
from tests.support.golden import updating

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"<!--\s*doc-test:\s*(\w+)\s*(?:\((.*)\))?\s*-->")
WIDTH = "100"


@dataclass(frozen=True, kw_only=True)
class Step:
    command: str
    """The shell line after `$ `."""
    expected: tuple[str, ...]
    """The lines the doc shows below it."""


@dataclass(frozen=True, kw_only=True)
class Block:
    page: Path
    line: int
    """1-based line of the opening fence."""
    body: tuple[str, ...]
    mark: tuple[str, str] | None
    """(kind, reason) of a `<!-- doc-test: ... -->` on the line before the fence."""

    @property
    def id(self) -> str:
        return f"{self.page.name}:{self.line}"

    def steps(self) -> list[Step]:
        steps: list[Step] = []
        for text in self.body:
            if text.startswith("$ "):
                steps.append(Step(command=text[2:], expected=()))
            elif steps:
                steps[-1] = Step(command=steps[-1].command, expected=(*steps[-1].expected, text))
        return steps


def find_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        body = tuple(lines[i + 1:end])
        if any(t.startswith("$ ") and "compat " in t for t in body):
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            m = MARK.search(before)
            blocks.append(Block(page=page, line=i + 1, body=body, mark=(m.group(1), m.group(2) or "") if m else None))
        i = end + 1
    return blocks


BLOCKS = [b for page in PAGES for b in find_blocks(page)]


DOC_PYTHON = "3.11.7"
"""The interpreter the docs' outputs were recorded with (the default Python of .ci/run)."""


def _as_documented_python(out: str) -> str:
    """The suite runs on 3.10 to 3.13 too: the judged interpreter's own version, where a header prints it, reads
    as the documented one (nothing else in an output depends on it)."""
    return re.sub(rf"^([Pp]ython +){re.escape(platform.python_version())}\b", rf"\g<1>{DOC_PYTHON}", out, flags=re.M)


def _pattern(expected: tuple[str, ...]) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        parts.append(".*?".join(re.escape(piece) for piece in line.rstrip().split("...")) + r"[ \t]*\n")
    return re.compile("".join(parts), re.S)


HOME = "/home/me"
"""The home directory the docs show; a fake home stands for it."""


def _run(command: str, cwd: Path, home: Path) -> str:
    """The command as a shell in `cwd` runs it: stdout and stderr as a terminal interleaves them,
    and a file the command writes with `> FILE` after it (the doc shows what the file holds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_MATRIX", "VIRTUAL_ENV", "CONDA_"))}
    env.update(HOME=str(home), COLUMNS=WIDTH, NO_COLOR="1", TERM="dumb", PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    env.pop("FORCE_COLOR", None)
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    redirect = re.search(r">\s*(\S+)\s*(?:#.*)?$", command)
    if redirect and (cwd / redirect.group(1)).is_file():
        out += (cwd / redirect.group(1)).read_text(encoding="utf-8")
    return out.replace(str(home), HOME).replace(str(cwd), ".").replace(str(ROOT), ".")


def _fake_env(spec: str, home: Path) -> None:
    """`~/proj/.venv torch==2.6.0 vllm==0.7.2`: that venv under the fake home, holding exactly those."""
    where, *pins = spec.split()
    packages = dict(p.split("==", 1) for p in pins)
    make_env(home / where.removeprefix("~/"), packages, deps=False)


def _workdir(tmp_path: Path) -> Path:
    """An empty directory (no config file found upward by accident) in which the repository's test
    data is where the docs name it (`tests/data/...`)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").symlink_to(ROOT / "tests")
    return work


def _rewrite(block: Block, outputs: list[tuple[Step, str]]) -> None:
    lines = block.page.read_text(encoding="utf-8").split("\n")
    body = []
    for step, out in outputs:
        body.append(f"$ {step.command}")
        body += out.rstrip("\n").split("\n") if out.strip() else []
    # Found again by its text: an earlier rewrite of the same page moved the lines.
    n = len(block.body)
    start = next(i for i in range(len(lines) - n + 1) if tuple(lines[i:i + n]) == block.body)
    lines[start:start + n] = body
    block.page.write_text("\n".join(lines), encoding="utf-8")


def test_blocks_are_found() -> None:
    assert len(BLOCKS) >= 10
    assert any(b.page.name == "README.md" for b in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block_runs_as_shown(block: Block, tmp_path: Path) -> None:
    with _short_home() as home:
        _check_block(block, tmp_path, home)


@contextmanager
def _short_home() -> Iterator[Path]:
    """A home directory whose path is as long as the /home/me the docs show, so that the text wraps
    where the doc's does (a venv records its own path, so the path cannot be swapped afterwards)."""
    for _ in range(100):
        home = Path(tempfile.gettempdir()) / "".join(random.choices(string.ascii_lowercase, k=max(1, len(HOME) - len(tempfile.gettempdir()) - 1)))
        try:
            home.mkdir()
        except FileExistsError:
            continue
        try:
            yield home
        finally:
            shutil.rmtree(home, ignore_errors=True)
        return
    raise AssertionError("no free short directory for a fake home")


def _check_block(block: Block, tmp_path: Path, home: Path) -> None:
    if block.mark is not None:
        kind, arg = block.mark
        assert kind in ("skip", "env") and arg.strip(), f"{block.id}: a doc-test mark is `skip (reason)` or `env (...)`"
        if kind == "skip":
            pytest.skip(f"{block.id}: {arg}")
        _fake_env(arg, home)
    work = _workdir(tmp_path)
    outputs, drift = [], []
    state: list[str] = []  # `source`, `cd`, `export` lines: each step runs in a shell they have set up
    for step in block.steps():
        assert shlex.split(step.command, comments=True), f"{block.id}: an empty command"
        out = _run("".join(f"{c} >/dev/null 2>&1\n" for c in state) + step.command, work, home)
        if shlex.split(step.command, comments=True)[0] in ("source", ".", "cd", "export"):
            state.append(step.command)
        out = _as_documented_python(out)
        outputs.append((step, out))
        if not _pattern(step.expected).fullmatch(out if out.endswith("\n") or not out else out + "\n"):
            drift.append(f"$ {step.command}\n--- the doc shows:\n" + "\n".join(step.expected) + f"\n--- it prints:\n{out}")
    if drift and updating():
        _rewrite(block, outputs)
        return
    assert not drift, f"{block.id}: the output drifted from the doc (COMPAT_UPDATE_GOLDEN=1 rewrites it)\n" + "\n".join(drift)
