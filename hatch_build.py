"""The wheel's build hook: ships the compiled matrix (compat/_matrix/compiled.pickle, compat.matrix.compiled), so
that a first `compat` run on a fresh machine or image reads it instead of parsing the curated TOML, and explain's
Hyperscan automata for the catalog, plain and coloured (compat/_matrix/automata/), so that a first `compat explain`
loads them instead of compiling them (about a second and a half of CPU each). An automaton records the machine it was
compiled for: where the wheel is installed on another (its CPU lacks an instruction set), it does not load and is
compiled into the user's cache as before.

The matrix is compiled by a child process of the building Python, from this source tree. Where that fails (a
build environment without compat's parsing dependencies, say), the wheel ships without it and a first run
compiles the matrix into the user's cache, as it always did: the hook never fails a build.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

_COMPILE = "import sys; from pathlib import Path; from compat.matrix.compiled import write_shipped; " \
           "write_shipped(Path(sys.argv[1]), Path(sys.argv[2]))"
# A plain line and a densely coloured one: the scanner compiles its plain automaton and the one that reads colours in place.
_AUTOMATA = "import sys; from pathlib import Path; from compat.explain.scan import hyperscan_available; " \
            "from compat.explain.match import read_log; from compat.matrix import load_matrix; " \
            "from compat.sources.cache import DirectoryStore; " \
            "hyperscan_available() and read_log([b'Traceback (most recent call last):\\n', " \
            "b'\\x1b[31mERROR\\x1b[0m x\\n' * 64], load_matrix(base=Path(sys.argv[1])), store=DirectoryStore(Path(sys.argv[2])))"


class CompiledMatrix(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the checkout's matrix, compiled into the cache on first use
        self._tmp = tempfile.mkdtemp(prefix="compat-matrix-")
        out = Path(self._tmp) / "compiled.pickle"
        if not self._child(_COMPILE, out, "the compiled matrix") or not out.is_file():
            return
        build_data["force_include"][str(out)] = "compat/_matrix/compiled.pickle"
        automata = Path(self._tmp) / "automata"
        if self._child(_AUTOMATA, automata, "explain's automata"):
            for path in sorted([*automata.glob("hyperscan-*.db"), *automata.glob("tolerant-*")]):  # and the rewriting
                build_data["force_include"][str(path)] = f"compat/_matrix/automata/{path.name}"

    def _child(self, code: str, out: Path, what: str) -> bool:
        """Run `code` in a child of the building Python on this tree's matrix, writing `out`; False (and why, on
        stderr) when it fails: the wheel then ships without it."""
        root = Path(self.root)
        try:
            done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r}); {code}",
                                   str(root / "matrix"), str(out)], capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            sys.stderr.write(f"compat build: {what} not shipped ({exc})\n")
            return False
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            sys.stderr.write(f"compat build: {what} not shipped ({last})\n")
            return False
        return True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
