"""Which interpreter doctor judges when the user names none: the environment they mean.

A training environment is usually activated (`source .venv/bin/activate`, `conda activate`)
while compat itself may live elsewhere: in its own pipx or `uv tool` environment, or in
/opt/compat in a training image. Judging compat's interpreter there would pass an environment
nobody trains in, so the order is: `--python`, the activated venv, the activated conda env,
the `python` on PATH when compat runs from an isolated install of its own, compat's interpreter.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import Chosen

# Files the tool installers leave at the root of the environment they create for one tool.
ISOLATED_MARKERS = ("pipx_metadata.json", "uv-receipt.toml")


@dataclass(frozen=True, kw_only=True)
class Selected:
    python: Path
    """The interpreter to run."""
    chosen: Chosen
    """Why it was chosen."""
    fallback: Path | None = None
    """compat's own interpreter, judged instead when the python found on PATH does not run."""


@dataclass(frozen=True, kw_only=True)
class Own:
    """compat's own interpreter, as far as choosing another one is concerned."""

    executable: Path
    """sys.executable of the process running compat."""
    isolated: bool
    """compat runs from an environment made for it alone (pipx, uv tool, a venv without torch)."""


def environment_python(root: Path) -> Path | None:
    """The interpreter of an environment directory (venv or conda, POSIX or Windows layout)."""
    for rel in ("bin/python", "bin/python3", "python.exe", "Scripts/python.exe"):
        candidate = root / rel
        if candidate.is_file():
            return candidate
    return None


def choose_interpreter(
    option: Path | None, *, environ: Mapping[str, str], own: Own, on_path: Path | None,
) -> Selected:
    """The interpreter to judge; raises UsageError for a `--python` directory holding none."""
    if option is not None:
        if option.is_dir():
            found = environment_python(option)
            if found is None:
                raise UsageError(f"--python {option}: a directory without bin/python (not a virtual or conda environment)")
            return Selected(python=found, chosen=Chosen.OPTION)
        return Selected(python=option, chosen=Chosen.OPTION)
    for var, chosen in (("VIRTUAL_ENV", Chosen.VIRTUAL_ENV), ("CONDA_PREFIX", Chosen.CONDA)):
        root = environ.get(var, "").strip()
        # A variable left behind by a removed environment names nothing to judge: look further.
        found = environment_python(Path(root)) if root else None
        if found is not None:
            return Selected(python=found, chosen=chosen)
    if own.isolated and on_path is not None and on_path.parent != own.executable.parent:
        return Selected(python=on_path, chosen=Chosen.PATH, fallback=own.executable)
    return Selected(python=own.executable, chosen=Chosen.OWN)


def is_isolated(prefix: Path, base_prefix: Path, purelib: Path) -> bool:
    """compat's environment was made for compat alone: a tool installer's marker, or a venv without torch."""
    if any((prefix / name).is_file() for name in ISOLATED_MARKERS):
        return True
    if prefix == base_prefix:
        return False  # a system or pyenv interpreter: it may well be where training runs
    return not any(purelib.glob("torch-*.dist-info"))


def select_interpreter(option: Path | None) -> Selected:
    """`choose_interpreter` for this process: its environment, its interpreter and PATH."""
    own = Own(
        executable=Path(sys.executable),
        isolated=is_isolated(Path(sys.prefix), Path(sys.base_prefix), Path(sysconfig.get_paths()["purelib"])),
    )
    which = shutil.which("python") or shutil.which("python3")
    return choose_interpreter(option, environ=os.environ, own=own, on_path=Path(which) if which else None)
