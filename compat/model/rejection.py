"""Why a release, or a build of one, cannot be part of the answer: a kind and the facts involved.

Decision code builds these; compat/report turns them into words. Nothing inspects their text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from compat.model.asker import Asker


class RejectionKind(str, enum.Enum):
    """Why a release (or one build of it) does not fit the target."""

    # torch builds (compat.judge.torch_build)
    TORCH_NOT_CURATED = "torch-not-curated"  # the release is not in matrix/torch.toml: its builds are unknown
    NO_PYTHON_WHEELS = "no-python-wheels"  # no wheels for the target Python
    NO_CUDA_BUILD = "no-cuda-build"  # the release has only CPU (or non-NVIDIA) builds
    NO_ARCH = "no-arch"  # no CUDA build has kernels for one of the GPUs
    NEEDS_DRIVER = "needs-driver"  # every build with the GPUs' kernels needs a newer driver
    NO_BUILD_FITS = "no-build-fits"  # each build fails for its own reason (see `problems`)
    OTHER_CUDA_MAJOR = "other-cuda-major"  # only builds of another CUDA major than the public one fit
    NO_SUCH_BUILD = "no-such-build"  # the build asked for (a pinned +cu126, or the CPU build) is not published
    # any release (compat.resolve)
    YANKED = "yanked"  # yanked on the index, and not pinned with ==
    REQUIRES_PYTHON = "requires-python"  # its Requires-Python excludes the target Python
    DEAD_DEPENDENCY = "dead-dependency"  # it requires something no release fits (see `because`)
    MISSING_EXTRA = "missing-extra"  # it does not provide an extra asked for (see `extra`)
    UPLOADED_AFTER = "uploaded-after"  # uploaded after --exclude-newer (see `date`)
    BROKEN_LINK = "broken-link"  # it lacks a name its asker (`asker`) imports unguarded at top level (`imported`)
    # compiled extensions (matrix/extensions.toml)
    EXTENSION_MIN_ARCH = "extension-min-arch"  # a GPU is older than the extension's oldest architecture
    EXTENSION_NOT_CURATED = "extension-not-curated"  # the release's prebuilt wheels are not in the table
    EXTENSION_NO_PYTHON = "extension-no-python"  # no prebuilt wheels for the target Python
    EXTENSION_CUDA_MAJOR = "extension-cuda-major"  # no prebuilt wheels for the chosen torch build's CUDA major


@dataclass(frozen=True, kw_only=True)
class Rejection:
    """One reason a release (or one build of it) does not fit the target."""

    kind: RejectionKind
    """What is wrong."""
    package: str
    """Canonical project name ("torch")."""
    version: str
    """The release ("2.5.1")."""
    variant: str | None = None
    """The build concerned ("cu124"), when the reason is about one build."""
    compute_capability: str | None = None
    """The GPU architecture a build lacks ("12.0"), or the too-old GPU's (EXTENSION_MIN_ARCH)."""
    gpu: str | None = None
    """The name of the GPU with that architecture ("RTX 5090")."""
    driver: str | None = None
    """The target's driver, for driver reasons ("470.82.01")."""
    max_cuda: str | None = None
    """The highest CUDA that driver runs fully ("11.4"); None when older than every curated CUDA."""
    min_driver: str | None = None
    """The lowest driver that runs a build with the GPUs' kernels ("525.60.13")."""
    python: str | None = None
    """The target Python, for NO_PYTHON_WHEELS, REQUIRES_PYTHON, EXTENSION_NO_PYTHON."""
    supported: str | None = None
    """What the release supports instead (its Python specifier)."""
    fallback_variant: str | None = None
    """A build that would run under CUDA minor-version compatibility, if the policy allowed it."""
    problems: tuple[Rejection, ...] = ()
    """Per-build reasons, for NO_BUILD_FITS."""
    yanked_reason: str | None = None
    """The index's yank reason, as published (YANKED)."""
    min_compute_capability: str | None = None
    """The oldest architecture the extension supports ("8.0"), for EXTENSION_MIN_ARCH."""
    cuda_major: int | None = None
    """The chosen torch build's CUDA major, for EXTENSION_CUDA_MAJOR."""
    dependency: str | None = None
    """The required package no release of which fits (DEAD_DEPENDENCY)."""
    specifier: str | None = None
    """The range required of it ("==2.5.1"; "" for any)."""
    exact: bool = False
    """The requirement pins one version (DEAD_DEPENDENCY)."""
    because: Rejection | None = None
    """Why the first release of `dependency` in range was dropped; None when no release is in range."""
    extra: str | None = None
    """The extra the release does not provide (MISSING_EXTRA)."""
    date: str | None = None
    """The --exclude-newer date the release was uploaded after (UPLOADED_AFTER)."""
    asker: Asker | None = None
    """For OTHER_CUDA_MAJOR: the package whose kernels were built for the public build's CUDA major;
    for BROKEN_LINK: the release whose top-level import this one lacks."""
    imported: str | None = None
    """For BROKEN_LINK: the API index key this release lacks ("transformers:top_k_top_p_filtering")."""


def mentions(rejection: Rejection, kinds: frozenset[RejectionKind]) -> bool:
    """Whether `rejection`, or a reason it carries (per build, or down a dependency), is of one of `kinds`."""
    if rejection.kind in kinds:
        return True
    if rejection.because is not None and mentions(rejection.because, kinds):
        return True
    return any(mentions(p, kinds) for p in rejection.problems)
