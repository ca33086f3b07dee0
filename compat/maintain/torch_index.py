"""The PyTorch index's listing of torch wheels, held against matrix/torch.toml: every CUDA build the index has of
a release must be one of its `variants`, or a lock never offers it (torch 2.9.0-2.10.0's cu129 builds were missing
so a round ago).

The listing is the index's simple page for torch (https://download.pytorch.org/whl/torch/), recorded as text: one
wheel file name or link a line, as the page lists them (`torch-2.10.0+cu129-cp312-cp312-manylinux_2_28_x86_64.whl`).
It sits beside torch.toml as `torch-index.txt` in the matrix or an overlay; `compat matrix validate` compares the
two when it is there. Only Linux x86_64 wheels count: the matrix describes those.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from compat.matrix.torch import TorchTable

LISTING = "torch-index.txt"
"""The file name of the recorded listing, in a matrix root."""

# torch-<version>[+<variant>]-cp<XY>-<abi>-<platform>.whl, URL-quoted or not (%2B for "+").
_WHEEL = re.compile(
    r"torch-(?P<version>\d+(?:\.\d+)+)(?:(?:\+|%2B)(?P<variant>[a-z][a-z0-9.]*))?-cp\d+-[a-z0-9_]+-(?P<platform>[a-z0-9_.]+?)\.whl",
    re.IGNORECASE,
)


def listed_builds(text: str) -> dict[Version, frozenset[str]]:
    """The variants ("cu129", "cpu") the listing has of each torch release, Linux x86_64 wheels only; a wheel without
    a local tag is the default index's build, which every release has, and is not a variant."""
    found: dict[Version, set[str]] = {}
    for m in _WHEEL.finditer(text):
        if "x86_64" not in m["platform"] or "linux" not in m["platform"] or not m["variant"]:
            continue
        try:
            version = Version(m["version"])
        except InvalidVersion:
            continue
        found.setdefault(version, set()).add(m["variant"].lower())
    return {v: frozenset(s) for v, s in found.items()}


def missing_builds(torch: TorchTable, text: str) -> Iterator[tuple[str, str]]:
    """(key in torch.toml, problem) for each CUDA or CPU build the listing has that torch.toml does not name, and each
    variant torch.toml names of a listed release that the listing lacks. Releases the listing does not carry (and its
    ROCm/XPU builds, which the matrix does not describe) are not judged."""
    listed = listed_builds(text)
    for i, release in enumerate(torch.releases):
        try:
            have = listed.get(Version(release.version))
        except InvalidVersion:
            continue
        if have is None:
            continue
        builds = {v for v in have if v == "cpu" or v.startswith("cu")}
        labels = {v.label for v in release.variants}
        missing = sorted(builds - labels)
        if missing:
            yield (f"release[{i}].variants",
                   f"the PyTorch index lists {', '.join(missing)} of torch {release.version}; add {'it' if len(missing) == 1 else 'them'}")
        extra = sorted(labels - builds)
        if extra:
            verb = "is" if len(extra) == 1 else "are"
            yield (f"release[{i}].variants", f"{', '.join(extra)} of torch {release.version} {verb} not on the PyTorch index ({LISTING})")
