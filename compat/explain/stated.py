"""What an error message states about versions: the records explain's reader fills and the report renders.

Kept apart from the reader (compat/explain/versions.py), which writes install commands through
compat.judge: the report renders these records without importing any deciding code.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Change(str, Enum):
    """Which side of a stated mismatch to change."""

    INSTALLED = "installed"
    """Install a version of `subject` that satisfies `wanted`."""
    ARTEFACT = "artefact"
    """Reinstall or rebuild `by` (the binary that states the requirement) for the `subject` you have."""
    HOST = "host"
    """The host: its driver (or glibc) is older than the software needs."""
    TOOLKIT = "toolkit"
    """The build toolchain: the CUDA toolkit (nvcc, ptxas) or the host compiler that builds extensions."""
    GPU = "gpu"
    """The GPU: its compute capability is outside what the software was built or written for."""


HOST_SUBJECTS = frozenset({"python", "glibc", "glibcxx", "cxxabi", "cuda", "cuda-toolkit", "nvidia-driver", "gcc",
                           "compute-capability", "ptx-isa", "cudnn", "nccl"})
"""Subjects that are not a package pip installs: no `pip install` command is written for them."""


@dataclass(frozen=True, kw_only=True)
class StatedVersion:
    subject: str
    """What the versions are of: a package name (canonical) or one of `HOST_SUBJECTS`."""
    wanted: str
    """What the message says is needed: a specifier (">=2.32", "==2.4.0", "<2"); "" when it names no bound."""
    found: str | None
    """The version the message says it found, when it says."""
    by: str | None
    """Who needs it: the package or file that states the requirement, when the message says."""
    change: Change
    """The side to change, from the message's kind and the facts."""
    phrasing: str = ""
    """The id of the `Phrasing` that read it."""
    installed: str | None = None
    """The version the facts give for `subject` (None: not known or not installed)."""
    satisfied: bool | None = None
    """Whether `installed` satisfies `wanted` (None without facts): True means the message is stale
    or comes from another environment than the one probed."""
    command: str | None = None
    """The command that changes the installed side, when it is a package and the bound is known."""
    text: str = ""
    """The words of the message the versions were read from."""
