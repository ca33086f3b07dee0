"""What the resolver reasons about: a need (a requirement as the search holds it), a candidate (a release, or a
torch build), and the small rules every module of the resolver shares about them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.matrix.releases import Release
from compat.model.asker import Asker, AskerKind
from compat.model.lock import PinReason
from compat.model.rejection import Rejection, RejectionKind
from compat.model.torch_variant import TorchVariant

# Packages whose public wheels carry CUDA kernels built for the CUDA major of torch's public-index
# build: with a torch of another CUDA major their extension fails to load (`libcudart.so.13:
# cannot open shared object file`, vllm-project/vllm#44335); within the major they run.


BUILT_AGAINST_DEFAULT_TORCH = frozenset({"vllm", "xformers", "flashinfer-python"})
# Releases from which a package's index wheels carry no kernels at all: flashinfer-python's are py3-none-any from
# 0.5.0 (flashinfer_python-0.5.0-py3-none-any.whl; kernels are JIT-compiled, or come from flashinfer-cubin and the
# per-CUDA flashinfer-jit-cache), so they pair with a torch of any CUDA major and do not hold vLLM's other builds back.
_NO_KERNELS_FROM = {"flashinfer-python": Version("0.5.0")}


def built_against_default_torch(name: str, version: Version | None) -> bool:
    """Whether release `version` of `name` carries kernels for the CUDA major of torch's public-index build."""
    if name not in BUILT_AGAINST_DEFAULT_TORCH:
        return False
    pure = _NO_KERNELS_FROM.get(name)
    return pure is None or version is None or version < pure

PROBE = Asker(kind=AskerKind.PROBE)


def _common_majors(needs: Iterable[Need]) -> frozenset[str]:
    """The other CUDA majors every package with kernels among `needs` has a build for."""
    sets = [n.other_majors for n in needs if n.default_build]
    return frozenset.intersection(*sets) if sets else frozenset()


@dataclass(frozen=True, kw_only=True)
class Need:
    """One requirement the resolver must meet, and who asked for it."""

    name: str
    """Canonical project name."""
    extras: frozenset[str]
    """Extras asked for."""
    specifier: SpecifierSet
    """The range asked for."""
    asker: Asker
    """Who asked."""
    default_build: bool = False
    """torch must have the CUDA major of its public-index build: the asker's kernels were built for it."""
    other_majors: frozenset[str] = frozenset()
    """With `default_build`, the other CUDA majors the asker has a build for (matrix/builds.toml)."""
    variant: TorchVariant | None = None
    """torch must be this build (cu126, cpu): a target pinned with a local tag (`torch==2.6.0+cu126`)."""

    @property
    def identifier(self) -> str:
        return ident(self.name, self.extras)

    @cached_property
    def spec_text(self) -> str:
        """The specifier as text, computed once: SpecifierSet.__str__ sorts and formats on every call."""
        return str(self.specifier)

    @cached_property
    def exact_versions(self) -> frozenset[Version]:
        """The versions this need pins exactly (==X without a wildcard)."""
        return frozenset(Version(s.version) for s in self.specifier if s.operator in ("==", "===") and "*" not in s.version)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    name: str
    """Canonical project name."""
    version: Version | None
    """None for a package the snapshot does not track (pip resolves it)."""
    extras: frozenset[str] = frozenset()
    """Extras this candidate stands for (one resolvelib identifier per extras set)."""
    variant: TorchVariant | None = None
    """torch's build (cu126); None for a non-torch package or an unknown build."""
    default_variant: bool = True
    """`variant` is what the public index serves."""
    requires: tuple[Requirement, ...] = ()
    """The release's declared requirements."""
    requires_known: bool = True
    """False for an sdist-only release: its requirements are unknown to the matrix."""
    evidence: PinReason | None = None
    """Why this release comes first among those allowed: tested together, contemporaneous or newest (None: no target to relate it to)."""

    @property
    def identifier(self) -> str:
        return ident(self.name, self.extras)

    def asker(self) -> Asker:
        return Asker(kind=AskerKind.PACKAGE, package=self.name, version=str(self.version) if self.version else None,
                     extras=tuple(sorted(self.extras)))


def cpu_build_requires(requires: Sequence[Requirement]) -> tuple[Requirement, ...]:
    """What a CPU (or ROCm) build of torch requires: the recorded requirements are its public CUDA wheel's, whose
    triton and nvidia-* libraries PyTorch adds to CUDA builds only (PYTORCH_EXTRA_INSTALL_REQUIREMENTS in
    pytorch/pytorch .github/scripts/generate_binary_build_matrix.py; `pip show torch==2.13.0+cpu` lists neither)."""
    return tuple(r for r in requires if not (r.name == "triton" or r.name.startswith("nvidia-")))


def _minor(v: Version) -> tuple[int, ...]:
    return tuple(v.release[:2])


def _missing_extra(name: str, release: Release, extras: frozenset[str]) -> Rejection | None:
    """A release that does not provide an extra asked for: pip would drop the extra (and its packages) silently."""
    if not extras or not isinstance(release.requires, tuple):
        return None  # requirements (and extras) unknown: the release is judged on what is known
    provided = {str(canonicalize_name(e)) for e in release.extras}
    lacking = sorted(extras - provided)
    if not lacking:
        return None
    return Rejection(kind=RejectionKind.MISSING_EXTRA, package=name, version=str(release.version), extra=lacking[0])


def ident(name: str, extras: Iterable[str]) -> str:
    ordered = sorted(extras)
    return f"{name}[{','.join(ordered)}]" if ordered else name


def is_exact(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def is_pin(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") for s in spec)
