"""Packages compiled against torch (matrix/extensions.toml) against the torch that is installed:
what `compat lock` refuses to pin, doctor reports when it is already installed."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from compat.judge.checks._util import found
from compat.judge.conditions import in_spec
from compat.matrix import Matrix
from compat.matrix.signatures import Recognition
from compat.model.facts import Facts, TorchBuild
from compat.model.findings import Finding, curated, observed
from compat.model.unknown import Unknown

NO_WHEEL = "extension-without-wheel-for-torch"

OWNS = {
    NO_WHEEL: frozenset({"dist", "project", "torch", "wheels", "cuda", "python", "module", "dist_pin"}),
}
"""The catalog entries these checks speak through, and the `{fields}` they fill in each."""


def check_extension_wheels(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    torch = facts.torch
    if not isinstance(torch, TorchBuild) or isinstance(facts.packages, Unknown):
        return
    base = torch.version.split("+")[0]
    python = facts.python.markers.get("python_full_version", facts.python.version)
    major = _major(torch.cuda) if isinstance(torch.cuda, str) else None
    for ext in matrix.extensions.extensions:
        dist = facts.package(ext.package)
        if dist is None or isinstance(dist, Unknown):
            continue
        try:
            row = ext.release(Version(dist.version))
        except ValueError:  # InvalidVersion, or a number longer than int() reads
            continue
        if row is None:
            continue  # its wheels are not curated: nothing to say either way
        misses = []
        if not in_spec(base, row.torch):
            misses.append(observed(f"torch {base} is outside {row.torch}"))
        if major is not None and major not in row.cuda_majors:
            misses.append(observed(f"CUDA {torch.cuda} is not CUDA {' or '.join(str(m) for m in row.cuda_majors)}"))
        if not in_spec(python, row.python):
            misses.append(observed(f"Python {python} is outside {row.python}"))
        if not misses:
            continue
        cuda = f"CUDA {torch.cuda}" if isinstance(torch.cuda, str) else "no CUDA"
        majors = "/".join(f"cu{m}" for m in row.cuda_majors)
        yield found(
            matrix, NO_WHEEL,
            values={"dist": f"{dist.name} {dist.version}", "project": dist.name, "torch": torch.version,
                    "wheels": f"torch {row.torch}, {majors}, Python {row.python}", "cuda": cuda, "python": python,
                    "module": dist.name.replace("-", "_"), "dist_pin": f"{dist.name}=={dist.version}"},
            evidence=(curated(f"{dist.name} {dist.version} wheels: torch {row.torch}, {majors}, Python {row.python}", source=row.source),
                      *misses),
            see=tuple(s.id for s in matrix.signatures if s.recognises_for(Recognition.ABI_UNDEFINED_SYMBOL, ext.package)),
        )


def _major(cuda: str) -> int | None:
    try:
        return Version(cuda).release[0]
    except (InvalidVersion, IndexError):
        return None
