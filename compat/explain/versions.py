"""Versions an error message states on both sides of a mismatch, checked against the facts.

"built for torch 2.4, you have 2.5", "tokenizers>=0.19 is required ..., but found
tokenizers==0.14.1", "version `GLIBC_2.32' not found", "compiled using NumPy 1.x cannot be run in
NumPy 2.0.0", Ray's "Version mismatch" and torchvision's two CUDA versions are read generically
into `StatedVersion` records; `check` then compares the side the message says was found with what
is installed (packages, host glibc, driver) and names the side to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import Enum

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compat.explain.roots import package_of
from compat.model.facts import Facts
from compat.model.unknown import Unknown
from compat.version_text import unreadable_version


class Change(str, Enum):
    """Which side of a stated mismatch to change."""

    INSTALLED = "installed"
    """Install a version of `subject` that satisfies `wanted`."""
    ARTEFACT = "artefact"
    """Reinstall or rebuild `by` (the binary that states the requirement) for the `subject` you have."""
    HOST = "host"
    """The host: its driver (or glibc) is older than the software needs."""


@dataclass(frozen=True, kw_only=True)
class StatedVersion:
    subject: str
    """What the versions are of: a package name (canonical), "glibc", "cuda", "nvidia-driver"."""
    wanted: str
    """What the message says is needed: a specifier (">=2.32", "==2.4.0", "<2")."""
    found: str | None
    """The version the message says it found, when it says."""
    by: str | None
    """Who needs it: the package or file that states the requirement, when the message says."""
    change: Change
    """The side to change, from the message's kind and the facts."""
    installed: str | None = None
    """The version the facts give for `subject` (None: not known or not installed)."""
    satisfied: bool | None = None
    """Whether `installed` satisfies `wanted` (None without facts): True means the message is stale
    or comes from another environment than the one probed."""
    text: str = ""
    """The words of the message the versions were read from."""


_NAMES = {"pytorch": "torch", "numpy": "numpy", "cuda": "cuda", "ray": "ray", "nccl": "nccl", "glibc": "glibc", "glibcxx": "glibcxx"}
_VER = r"\d(?:[\w+*-]|\.(?=\w))*"
_PKG = r"(?<![\w.-])[A-Za-z][\w.-]*"
"""A package name, starting a word: tried at word starts only, or one long word is read n times (quadratic)."""


def _name(text: str) -> str:
    low = text.lower()
    return _NAMES.get(low, canonicalize_name(low))


def _spec(text: str) -> str:
    text = text.strip().rstrip(".,;")
    if text.endswith(".x"):
        major = text[:-2]
        return f"=={major}.*"
    if text[:1].isdigit():
        return f"=={text}"
    return text.replace(" ", "")


_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # version `GLIBC_2.32' not found (required by /x/lib.so)
    (re.compile(r"version [`'](GLIBC(?:XX)?)_([\d.]+)' not found(?: \(required by ([^)\n]{1,500})\))?"), "glibc"),
    # A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0
    (re.compile(r"compiled using NumPy (" + _VER + r") cannot be run in\s+NumPy (" + _VER + r")(?:\s|$|\.\s)"), "numpy"),
    # transformers' require_version: tokenizers>=0.19,<0.20 is required for ..., but found tokenizers==0.21.0.
    (re.compile(r"(" + _PKG + r")\s*((?:[<>=!~]=?\s*[\w.*+]+\s*(?:,\s*)?)+) is required[^,]{0,300}, "
                r"but found (" + _PKG + r")==(" + _VER + r")(?:\.?\s|\.?$)"), "require"),
    # pip: vllm 0.7.2 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible.
    (re.compile(r"(" + _PKG + r") " + _VER + r" requires (" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?)+), "
                r"but you have (" + _PKG + r") (" + _VER + r")(?:\s|$)"), "pip"),
    # requires torch>=2.4 but found 2.3.1 / requires CUDA 12.1 but found 11.8
    (re.compile(r"requires? (" + _PKG + r") ?(?:version )?((?:[<>=!~]=?\s*)?" + _VER + r"),? "
                r"but (?:found|got|you have|is|installed)(?: version)?:? (?:" + _PKG + r" )?(?:version )?(" + _VER + r")(?:[\s,.;)]|$)"),
     "requires"),
    # PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1
    (re.compile(r"(PyTorch|torch) has CUDA Version=(" + _VER + r") and (" + _PKG + r") has CUDA Version=(" + _VER + r")"), "two-cuda"),
    # Ray: The cluster was started with: Ray: 2.9.0 ... This process ... was started with: Ray: 2.10.0
    (re.compile(r"cluster was started with:\s*Ray: (" + _VER + r")\s.{0,2000}?was started with:\s*Ray: (" + _VER + r")(?:\s|$)",
                re.S), "ray"),
    # The NVIDIA driver on your system is too old (found version 11040)
    (re.compile(r"driver on your system is too old \(found version (\d{1,9})\)"), "driver"),
    # built for torch 2.4.0, you have 2.5.1 / compiled against torch 2.4 but ... torch 2.5
    (re.compile(r"(?:built|compiled) (?:for|against|with|using) (" + _PKG + r") (?:version )?(" + _VER + r")[,;]?\s"
                r"(?:[^.\n]{0,300}?\b(?:you have|found|installed|have|running|but|is)\b)[^\d\n]{0,40}?(" + _VER
                + r")(?:[\s,.;)]|$)"), "built"),
)


def stated_versions(text: str) -> tuple[StatedVersion, ...]:
    """The mismatches `text` states, in the order they appear, each once."""
    out: list[StatedVersion] = []
    seen: set[tuple[str, str, str | None]] = set()
    for sv in _read(text):
        if unreadable_version(sv.wanted) or (sv.found is not None and unreadable_version(sv.found)):
            continue  # a number no version has: not a statement compat can check
        key = (sv.subject, sv.wanted, sv.found)
        if key not in seen:
            seen.add(key)
            out.append(sv)
    return tuple(out)


def _read(text: str) -> Iterator[StatedVersion]:
    for rx, kind in _RULES:
        for m in rx.finditer(text):
            g = m.groups()
            said = m.group(0).strip()
            if kind == "glibc":
                by = (package_of(g[2]) or g[2]) if g[2] else None
                yield StatedVersion(subject=g[0].lower(), wanted=f">={g[1]}", found=None, by=by, change=Change.ARTEFACT, text=said)
            elif kind == "numpy":
                yield StatedVersion(subject="numpy", wanted=_spec(g[0]), found=g[1], by=None, change=Change.INSTALLED, text=said)
            elif kind == "require":
                yield StatedVersion(subject=_name(g[0]), wanted=_spec(g[1]), found=g[3], by=None, change=Change.INSTALLED, text=said)
            elif kind == "pip":
                yield StatedVersion(subject=_name(g[1]), wanted=_spec(g[2]), found=g[4], by=_name(g[0]), change=Change.INSTALLED, text=said)
            elif kind == "requires":
                yield StatedVersion(subject=_name(g[0]), wanted=_spec(g[1]), found=g[2], by=None, change=Change.INSTALLED, text=said)
            elif kind == "two-cuda":
                yield StatedVersion(subject="cuda", wanted=_spec(g[1]), found=g[3], by=_name(g[2]), change=Change.ARTEFACT, text=said)
            elif kind == "ray":
                yield StatedVersion(subject="ray", wanted=_spec(g[0]), found=g[1], by=None, change=Change.INSTALLED, text=said)
            elif kind == "driver":
                cuda = f"{int(g[0]) // 1000}.{int(g[0]) % 1000 // 10}"
                yield StatedVersion(subject="nvidia-driver", wanted="", found=cuda, by=None, change=Change.HOST, text=said)
            else:  # built
                yield StatedVersion(subject=_name(g[0]), wanted=_spec(g[1]), found=g[2], by=None, change=Change.ARTEFACT, text=said)


def check(stated: StatedVersion, facts: Facts | None) -> StatedVersion:
    """`stated` with what the facts say of its subject, and the side to change decided."""
    if facts is None:
        return stated
    installed = _installed(stated.subject, facts)
    if installed is None:
        return stated
    satisfied = _satisfies(installed, stated.wanted)
    change = stated.change
    if stated.subject in ("glibc", "glibcxx"):
        # The host's C library is not something to upgrade in place: the binary must change.
        change = Change.ARTEFACT
    return replace(stated, installed=installed, satisfied=satisfied, change=change)


def _installed(subject: str, facts: Facts) -> str | None:
    if subject == "glibc":
        glibc = facts.python.glibc
        return glibc if isinstance(glibc, str) else None
    if subject in ("nvidia-driver", "cuda"):
        driver = facts.hardware.driver_cuda if subject == "cuda" else facts.hardware.driver
        if subject == "cuda" and facts.torch is not None and not isinstance(facts.torch, Unknown):
            cuda = facts.torch.cuda
            return cuda if isinstance(cuda, str) else None
        return driver if isinstance(driver, str) else None
    dist = facts.package(subject)
    if dist is None or isinstance(dist, Unknown):
        return None
    return dist.version


def _satisfies(version: str, wanted: str) -> bool | None:
    if not wanted:
        return None
    try:
        return SpecifierSet(wanted).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
