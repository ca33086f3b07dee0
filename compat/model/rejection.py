"""Why a release, or a build of one, cannot be part of the answer: a kind and the facts involved.

Decision code builds these; compat/report turns them into words. Nothing inspects their text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class RejectionKind(str, enum.Enum):
    """Why a torch release has no build for the target (more kinds join as the resolver needs them)."""

    TORCH_NOT_CURATED = "torch-not-curated"  # the release is not in matrix/torch.toml: its builds are unknown
    NO_PYTHON_WHEELS = "no-python-wheels"  # no wheels for the target Python
    NO_CUDA_BUILD = "no-cuda-build"  # the release has only CPU (or non-NVIDIA) builds
    NO_ARCH = "no-arch"  # no CUDA build has kernels for one of the GPUs
    NEEDS_DRIVER = "needs-driver"  # every build with the GPUs' kernels needs a newer driver
    NO_BUILD_FITS = "no-build-fits"  # each build fails for its own reason (see `problems`)
    OTHER_CUDA_MAJOR = "other-cuda-major"  # only builds of another CUDA major than the public one fit


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
    """The GPU architecture a build lacks ("12.0")."""
    gpu: str | None = None
    """The name of the GPU with that architecture ("RTX 5090")."""
    driver: str | None = None
    """The target's driver, for driver reasons ("470.82.01")."""
    max_cuda: str | None = None
    """The highest CUDA that driver runs fully ("11.4"); None when older than every curated CUDA."""
    min_driver: str | None = None
    """The lowest driver that runs a build with the GPUs' kernels ("525.60.13")."""
    python: str | None = None
    """The target Python, for NO_PYTHON_WHEELS."""
    supported: str | None = None
    """What the release supports instead (its Python specifier)."""
    fallback_variant: str | None = None
    """A build that would run under CUDA minor-version compatibility, if the policy allowed it."""
    problems: tuple[Rejection, ...] = ()
    """Per-build reasons, for NO_BUILD_FITS."""
