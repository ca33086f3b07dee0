"""How a matched entry's fix reads against what is installed: what it asks for that is already there (the cause is
then likely elsewhere), and what a pinned fix would pull in ("vllm 0.7.2 requires torch==2.5.1; you have torch 2.5.1")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from compat.errors import CompatError
from compat.judge.conditions import in_spec
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from compat.matrix import Matrix
    from compat.matrix.signatures import Signature
    from compat.model.facts import Facts


def tailor_fix(sig: Signature, facts: Facts, matrix: Matrix | None = None) -> list[str]:
    """The fix's requirements compared with what is installed, and what a pinned fix would
    pull in ("vllm 0.7.2 requires torch==2.5.1; you have torch 2.5.1")."""
    from packaging.requirements import Requirement  # only a ranked match with a fix needs it

    notes: list[str] = []
    for text in sig.fix.requires:
        req = Requirement(text)
        dist = facts.package(req.name)
        if isinstance(dist, Unknown):
            notes.append(f"cannot compare with {req.name}: {dist.reason}")
            continue
        if dist is None:
            notes.append(f"{req.name} is not installed; the fix needs {text}")
            continue
        spec = str(req.specifier)
        if spec and in_spec(dist.version, req.specifier):
            notes.append(f"you have {req.name} {dist.version}, which already satisfies {spec}: the cause is likely elsewhere")
            continue
        notes.append(f"you have {req.name} {dist.version}; the fix needs {text}")
        pinned = _pinned_version(req)
        if pinned is not None:
            notes.extend(_pulled_in(req.name, pinned, facts, matrix))
    return notes


def _pinned_version(req: Requirement) -> str | None:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
        return specs[0].version
    return None


def _pulled_in(name: str, version: str, facts: Facts, matrix: Matrix | None) -> list[str]:
    releases = getattr(matrix, "releases", None)
    if releases is None:
        return []
    try:
        pkg = releases.get(name)
    except (CompatError, OSError):
        # The release index is optional for explain: without it the fix is simply not tailored.
        return []
    if pkg is None:
        return []
    release = next((r for r in pkg.releases if str(r.version) == version), None)
    if release is None or not release.requires:
        return []
    out = []
    for dep in release.requires:
        if dep.marker is not None and "extra" in str(dep.marker):
            continue
        have = facts.package(dep.name)
        if isinstance(have, Unknown) or have is None or not str(dep.specifier):
            continue
        ok = in_spec(have.version, dep.specifier)
        verdict = "which you have" if ok else "installing it will replace it"
        out.append(f"{name} {version} needs {canonicalize_name(dep.name)}{dep.specifier}; you have {have.version} ({verdict})")
    return out
