"""Three verdicts, never blurred: a known environment failure, an environment failure compat cannot
name, or not an environment failure compat recognises.

An error is known when a root-cause signature of the catalog matched it (later: an API-timeline
answer, another source of "known"). Otherwise its text, its exception type and the frames that
raised it say whether it is about the environment at all (`Clue`): an import that failed, a
binary that does not load, a CUDA/driver or NCCL error, a stated version mismatch, an API that is
not where the caller expects it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from compat.explain.roots import ErrorKind, Frame, Raised
from compat.explain.versions import StatedVersion


class ErrorVerdict(str, Enum):
    """What compat can say about one error, most serious first."""

    KNOWN = "known"
    """A known environment failure: the catalog names it and its fix."""
    UNKNOWN_ENVIRONMENT = "unknown-environment"
    """An environment failure whose cause compat cannot name."""
    NOT_ENVIRONMENT = "not-environment"
    """Not an environment failure compat recognises (often a bug in the program itself)."""


SERIOUSNESS = (ErrorVerdict.KNOWN, ErrorVerdict.UNKNOWN_ENVIRONMENT, ErrorVerdict.NOT_ENVIRONMENT)
"""The whole answer takes the first of these that any of its root errors has."""


class Clue(str, Enum):
    """Why an unnamed error is about the environment."""

    IMPORT = "import"
    """A module failed to import."""
    BINARY = "binary"
    """A compiled extension or shared library does not load (symbols, glibc, missing .so)."""
    CUDA = "cuda"
    """A CUDA, driver, cuBLAS/cuDNN or kernel-image error."""
    NCCL = "nccl"
    """An NCCL or process-group error."""
    VERSION = "version"
    """The message states a version mismatch."""
    API = "api"
    """A library's API is not what its caller expects (a missing attribute or argument)."""


_CLUES: tuple[tuple[Clue, re.Pattern[str]], ...] = (
    (Clue.BINARY, re.compile(r"undefined symbol|cannot open shared object file|GLIBC(?:XX)?_[\d.]+' not found|wrong ELF class|"
                             r"invalid ELF header|DLL load failed|\.so(?:\.\d+)*: cannot|image not found|incompatible architecture")),
    (Clue.IMPORT, re.compile(r"^(?:ImportError|ModuleNotFoundError)\b|No module named |cannot import name ")),
    (Clue.CUDA, re.compile(r"CUDA error|CUDA driver|cudaError|CUDA_ERROR|CUBLAS_STATUS|CUDNN_STATUS|cuDNN error|no kernel image|"
                           r"NVIDIA driver|NVML|nvrtc|CUDA runtime|Found no NVIDIA driver|CUDA initialization|cudaGetDevice")),
    (Clue.NCCL, re.compile(r"NCCL|ProcessGroupNCCL|Watchdog caught|DistBackendError|c10d")),
    (Clue.VERSION, re.compile(r"[Vv]ersion mismatch|incompatible with|not compatible with|(?:built|compiled) (?:for|against|with) |"
                              r"requires? [\w.-]+ ?(?:version )?[<>=~]|is not supported (?:by|on|in) (?:this|your)")),
)
_API_ANYWHERE = re.compile(r"module '[\w.]+' has no attribute|cannot import name ")
_API_IN_LIBRARY = re.compile(r"has no attribute '|got an unexpected keyword argument|missing \d+ required positional argument|"
                             r"takes \d+ positional arguments? but \d+ (?:were|was) given")
_NONE_OBJECT = re.compile(r"'NoneType' object")


def clues(kind: ErrorKind, chain: tuple[Raised, ...], versions: tuple[StatedVersion, ...]) -> tuple[Clue, ...]:
    """Why the error is about the environment, if it is (empty: it does not look so)."""
    found: list[Clue] = []

    def add(clue: Clue) -> None:
        if clue not in found:
            found.append(clue)

    if kind is ErrorKind.NCCL:
        add(Clue.NCCL)
    for raised in chain:
        text = f"{raised.short_type}: {raised.message}" if raised.type else raised.message
        for clue, rx in _CLUES:
            if rx.search(text):
                add(clue)
        in_library = _API_IN_LIBRARY.search(text) and not _NONE_OBJECT.search(text) and _raised_in_library(raised.frames)
        if _API_ANYWHERE.search(text) or in_library:
            add(Clue.API)
    if versions:
        add(Clue.VERSION)
    return tuple(found)


def _raised_in_library(frames: tuple[Frame, ...]) -> bool:
    return bool(frames) and frames[-1].package is not None


@dataclass(frozen=True, kw_only=True)
class PackageSeen:
    name: str
    """A package whose files are in the error's frames, innermost first."""
    version: str | None
    """Its installed version from the facts; None when not known (no facts, or not installed)."""
