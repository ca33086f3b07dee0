"""The wheel's build hook: ships the compiled matrix (compat/_matrix/compiled.pickle, compat.matrix.compiled), so
that a first `compat` run on a fresh machine or image reads it instead of parsing the curated TOML.

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


class CompiledMatrix(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the checkout's matrix, compiled into the cache on first use
        self._tmp = tempfile.mkdtemp(prefix="compat-matrix-")
        out = Path(self._tmp) / "compiled.pickle"
        root = Path(self.root)
        try:
            done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(root)!r}); {_COMPILE}",
                                   str(root / "matrix"), str(out)], capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            sys.stderr.write(f"compat build: the compiled matrix is not shipped ({exc})\n")
            return
        if done.returncode != 0 or not out.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            sys.stderr.write(f"compat build: the compiled matrix is not shipped ({last})\n")
            return
        build_data["force_include"][str(out)] = "compat/_matrix/compiled.pickle"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
