"""The one way compat writes an installer command for an environment: doctor's `run` lines and
plan's steps both name the judged interpreter when it is not the one a bare `pip` would reach.

With `--python ENV`, a bare `pip install` runs whatever `pip` is first on PATH (compat's own, when
compat is installed on its own) and installs into the wrong place; `ENV/bin/python -m pip` cannot.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence

from compat.model.findings import Finding
from compat.model.installer import Installer


def pip_command(installer: Installer, python: str | None, verb: str, args: Sequence[str]) -> tuple[str, ...]:
    """argv of `pip VERB ARGS` for the interpreter `python` (None: the environment's own `python`)."""
    if installer is Installer.UV:
        head = ["uv", "pip", verb] + (["--python", python] if python else [])
    else:
        head = [python or "python", "-m", "pip", verb] + (["-y"] if verb == "uninstall" else [])
    return tuple(head + list(args))


def for_interpreter(findings: Sequence[Finding], python: str | None) -> tuple[Finding, ...]:
    """`findings` whose `pip ...` commands run `python -m pip ...`; unchanged when `python` is None."""
    if python is None:
        return tuple(findings)
    prefix = f"{shlex.quote(python)} -m pip "
    out = []
    for f in findings:
        commands = tuple(prefix + c[len("pip "):] if c.startswith("pip ") else c for c in f.fix.commands)
        out.append(f if commands == f.fix.commands else dataclasses.replace(f, fix=dataclasses.replace(f.fix, commands=commands)))
    return tuple(out)
