"""Fake environments for end-to-end tests: real venvs holding dist-info folders.

The METADATA of each distribution carries the Requires-Dist that the real release declares,
taken from the shipped release matrix (itself read from the releases' wheel metadata).
"""

from __future__ import annotations

import venv
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.matrix import shipped_matrix


def requires_of(name: str, version: str) -> list[str]:
    releases = shipped_matrix().releases.get(name)
    if releases is None:
        return []
    base = Version(version.split("+")[0])
    release = next((r for r in releases.releases if r.version == base), None)
    return [str(r) for r in (release.requires or ())] if release else []


def write_dist(site: Path, name: str, version: str, requires: list[str] | None = None) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in (requires_of(name, version) if requires is None else requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def with_pinned_deps(packages: dict[str, str]) -> dict[str, str]:
    """Add the exact pins (==) the packages declare on tracked packages, as pip would have installed them."""
    out = dict(packages)
    todo = list(packages.items())
    while todo:
        name, version = todo.pop()
        for text in requires_of(name, version):
            req = Requirement(text)
            pins = [s.version for s in req.specifier if s.operator == "=="]
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            dep = str(canonicalize_name(req.name))
            if pins and dep not in out:
                out[dep] = pins[0]
                todo.append((dep, pins[0]))
    return out


def make_env(root: Path, packages: dict[str, str], *, deps: bool = True) -> Path:
    """A venv at `root` with `packages` (name → version) "installed"; returns its python.

    With `deps`, the exact pins they declare are installed too, so the only broken requirements
    are the ones a test asks for.
    """
    venv.create(root, with_pip=False, symlinks=True)
    site = next(root.glob("lib/python*/site-packages"))
    for name, version in (with_pinned_deps(packages) if deps else packages).items():
        write_dist(site, name, version)
    return root / "bin" / "python"
