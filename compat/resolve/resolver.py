"""From targets and hardware to a pinned set (`Lock`), with resolvelib over the release matrix.

Every release is filtered by the target before the resolver sees it: Requires-Python, PEP 508
markers evaluated for the target interpreter and platform, yanked status, and for torch the CUDA
builds the driver runs whose compiled architectures cover every GPU. Packages that compile
against torch (matrix/extensions.toml) add a requirement on the torch their wheels were built for.

The catalog keeps a lock off known failures: after each resolution the result is laid over the
target facts and every signature is evaluated; a match with a version fix becomes a constraint
and the set is resolved again, so the answer never lands on a known-bad combination.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from packaging.markers import UndefinedEnvironmentName, UndefinedComparison
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.errors import ResolutionError, UsageError
from compat.model.facts import Distribution, Facts, Python, TorchBuild, TorchSource
from compat.model.lock import SCHEMA_VERSION, Constraint, Lock, Pin
from compat.matrix import Matrix
from compat.matrix.torch import variant_cuda
from compat.matrix.extensions import ExtensionTable
from compat.model.unknown import Unknown

# Built from the torch wheel index and published with the same local tag as torch; they must
# come from the same index as the torch build they ship next to.
TORCH_COMPANIONS = frozenset({"torchvision", "torchaudio"})

# Required by nearly everything, including packages the snapshot does not track (numba,
# mistral-common cap numpy): a pin here would fight them, so the lock gives the range and pip picks.
FLOATING = frozenset({"numpy"})

_PLATFORMS = {
    "linux-x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix"},
    "linux-aarch64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64", "os_name": "posix"},
    "macos-arm64": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64", "os_name": "posix"},
    "windows-amd64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64", "os_name": "nt"},
}


# ----------------------------------------------------------------------------- the target


def target_facts(facts: Facts, *, python_version: str | None = None, platform: str | None = None) -> Facts:
    """`facts` with the interpreter and platform replaced by a declared target; a complete marker environment either way."""
    markers = dict(facts.python.markers)
    version = facts.python.version
    declared = list(facts.declared)
    if python_version is not None:
        if not re.fullmatch(r"3\.\d{1,2}(\.\d{1,2})?", python_version):
            raise UsageError(f"--python-version {python_version!r}: expected 3.X or 3.X.Y (e.g. 3.11)")
        version = python_version if python_version.count(".") == 2 else f"{python_version}.0"
        declared.append("python")
    if platform is not None:
        if platform not in _PLATFORMS:
            raise UsageError(f"--platform {platform!r}: expected one of {', '.join(sorted(_PLATFORMS))}")
        markers.update(_PLATFORMS[platform])
        declared.append("platform")
    major_minor = ".".join(version.split(".")[:2])
    full = {
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "implementation_version": version,
        "platform_release": "",
        "platform_version": "",
        **_PLATFORMS["linux-x86_64"],
        **markers,
    }
    if python_version is not None or "python_version" not in markers:
        full.update(python_version=major_minor, python_full_version=version, implementation_version=version)
    python = dataclasses.replace(facts.python, version=version, markers=full)
    return dataclasses.replace(facts, python=python, declared=tuple(dict.fromkeys(declared)))


def declared_target(*, python_version: str, platform: str | None = None) -> Facts:
    """Facts for a target described entirely on the command line: nothing is probed.

    `compat lock --gpus 8xH100 --driver 550.54.15 --python-version 3.11` in a Docker build has no
    interpreter or GPU worth inspecting; lay the declared hardware on this with `apply_declared`.
    """
    from compat.model.facts import Hardware, HardwareSource, Launch

    why = Unknown(reason="not probed: the target was declared")
    base = Facts(
        schema_version=1,
        python=Python(version=python_version, implementation="cpython", executable=why, markers={}, glibc=why),
        packages=why,
        torch=why,
        hardware=Hardware(source=HardwareSource.DECLARED, driver=why, driver_cuda=why, gpus=why, links=why),
        launch=Launch(launcher=why, accelerate=why, env={}, shm_bytes=why, container=None),
    )
    return target_facts(base, python_version=python_version, platform=platform or "linux-x86_64")


def platform_name(facts: Facts) -> str:
    m = facts.python.markers
    for name, env in sorted(_PLATFORMS.items()):
        if all(m.get(k) == v for k, v in env.items() if k != "os_name"):
            return name
    return f"{m.get('sys_platform', '?')}-{m.get('platform_machine', '?')}"


def _contains(spec: SpecifierSet, version: Version, prereleases: bool | None) -> bool:
    # Answers are cached per (specifier text, version): hashing a SpecifierSet canonicalizes every
    # clause on each call, which cost more than the question itself while the resolver backtracks.
    return _contains_text(str(spec), version, prereleases)


@functools.lru_cache(maxsize=200_000)
def _contains_text(spec: str, version: Version, prereleases: bool | None) -> bool:
    return _spec(spec).contains(version, prereleases=prereleases)


@functools.lru_cache(maxsize=20_000)
def _spec(text: str) -> SpecifierSet:
    return SpecifierSet(text)


def _driver_text(v: Version) -> str:
    """NVIDIA writes driver versions with two-digit fields after the branch (560.28.03)."""
    first, *rest = v.release
    return ".".join([str(first), *(f"{p:02d}" for p in rest)])


def _sm(cc: str) -> str:
    return "sm_" + cc.replace(".", "")


@dataclass(frozen=True, kw_only=True)
class _Hardware:
    """The GPU facts the filters need, read once."""

    ccs: tuple[tuple[str, str], ...]
    """(compute capability, GPU name) of each distinct architecture; empty without GPUs."""
    driver: str | None
    """Driver version; None without an NVIDIA driver (or when unknown, see `notes`)."""
    max_cuda: str | None
    """Highest CUDA the driver fully supports."""
    notes: tuple[str, ...]


def _hardware(facts: Facts, matrix: Matrix) -> _Hardware:
    notes = []
    ccs: dict[str, str] = {}
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        notes.append(f"GPUs unknown ({gpus.reason}): torch builds not checked against the GPU architecture; declare --gpus")
    else:
        for gpu in gpus:
            if isinstance(gpu.compute_capability, Unknown):
                notes.append(f"GPU {gpu.index} {gpu.name}: compute capability unknown, not checked")
            else:
                ccs.setdefault(gpu.compute_capability, gpu.name)
    driver = facts.hardware.driver
    max_cuda = None
    if isinstance(driver, Unknown):
        notes.append(f"driver unknown ({driver.reason}): CUDA builds not checked against it; declare --driver")
        driver = None
    elif driver is not None:
        try:
            max_cuda = matrix.cuda.max_cuda(driver)
        except ValueError as exc:
            raise UsageError(f"driver {driver!r}: {exc}") from exc
    return _Hardware(ccs=tuple(sorted(ccs.items(), key=lambda kv: Version(kv[0]))), driver=driver, max_cuda=max_cuda, notes=tuple(notes))


def hardware_lines(facts: Facts, hw: _Hardware) -> tuple[str, ...]:
    lines = []
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown):
        lines.append("GPUs: unknown")
    elif not gpus:
        lines.append("GPUs: none")
    else:
        counts: dict[str, int] = {}
        for gpu in gpus:
            cc = gpu.compute_capability
            label = gpu.name if isinstance(cc, Unknown) else f"{gpu.name} ({_sm(cc)})"
            counts[label] = counts.get(label, 0) + 1
        lines.extend(f"{n}x {label}" for label, n in sorted(counts.items()))
    if hw.driver is not None:
        top = f"CUDA <= {hw.max_cuda}" if hw.max_cuda else "older than every curated CUDA"
        lines.append(f"driver {hw.driver} ({top})")
    elif not isinstance(facts.hardware.driver, Unknown):
        lines.append("driver: none")
    return tuple(lines)


# ----------------------------------------------------------------------------- resolvelib model


# Packages whose public wheels carry CUDA kernels built for the CUDA major of torch's public-index
# build: with a torch of another CUDA major their extension fails to load (`libcudart.so.13:
# cannot open shared object file`, vllm-project/vllm#44335); within the major they run.
BUILT_AGAINST_DEFAULT_TORCH = frozenset({"vllm", "xformers", "flashinfer-python"})


@dataclass(frozen=True, kw_only=True)
class Need:
    """One requirement the resolver must meet, and who asked for it."""

    name: str
    """Canonical project name."""
    extras: frozenset[str]
    specifier: SpecifierSet
    why: str
    """Who asked: "target", "vllm 0.7.2", "catalog: <signature id>", "extensions table"."""
    default_build: bool = False
    """torch must have the CUDA major of its public-index build: the asker's kernels were built for it."""

    @property
    def identifier(self) -> str:
        return _ident(self.name, self.extras)

    def text(self) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"


@dataclass(frozen=True, kw_only=True)
class Candidate:
    name: str
    version: Version | None
    """None for a package the snapshot does not track (pip resolves it)."""
    extras: frozenset[str] = frozenset()
    variant: str | None = None
    """torch build tag ("cu126"); None for the default build or a non-torch package."""
    default_variant: bool = True
    """`variant` is what the public index serves."""
    requires: tuple[Requirement, ...] = ()
    requires_known: bool = True

    @property
    def identifier(self) -> str:
        return _ident(self.name, self.extras)

    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version is not None else self.name


def _ident(name: str, extras: Iterable[str]) -> str:
    extras = sorted(extras)
    return f"{name}[{','.join(extras)}]" if extras else name


class _Filters:
    """Which releases fit the target, with the reason each one that does not fit was dropped."""

    def __init__(self, facts: Facts, matrix: Matrix, extensions: ExtensionTable, hw: _Hardware, minor_compat: bool) -> None:
        self.facts = facts
        self.matrix = matrix
        self.extensions = extensions
        self.hw = hw
        self.minor_compat = minor_compat
        self.env = dict(facts.python.markers)
        self.python = facts.python.version
        self.rejected: dict[tuple[str, str], str] = {}
        self._torch_cache: dict[str, tuple[str | None, bool, str | None]] = {}
        self._markers: dict[tuple[str, frozenset[str]], bool] = {}

    def markers_hold(self, req: Requirement, extras: frozenset[str]) -> bool:
        if req.marker is None:
            return not extras
        key = (str(req.marker), extras)
        if key not in self._markers:
            self._markers[key] = self._markers_hold(req, extras)
        return self._markers[key]

    def _markers_hold(self, req: Requirement, extras: frozenset[str]) -> bool:
        if req.marker is None:
            return not extras
        try:
            if not extras:
                return req.marker.evaluate({**self.env, "extra": ""})
            return any(req.marker.evaluate({**self.env, "extra": e}) for e in extras) and not req.marker.evaluate({**self.env, "extra": ""})
        except (UndefinedEnvironmentName, UndefinedComparison):
            return False

    def same_major_as_default(self, version: Version, variant: str | None) -> bool:
        """Whether torch `version`'s `variant` build has the CUDA major of its public-index build."""
        if variant is None:
            return True
        rel = self.matrix.torch.release(str(version))
        mine, theirs = variant_cuda(variant), variant_cuda(rel.default_variant) if rel else None
        if mine is None or theirs is None:
            return mine == theirs
        return mine.split(".")[0] == theirs.split(".")[0]

    def torch_build(self, version: Version) -> tuple[str | None, bool, str | None]:
        """(variant, is_default, None) of the build to use, or (None, False, why none fits)."""
        key = str(version)
        if key not in self._torch_cache:
            self._torch_cache[key] = self._torch_build(key)
        return self._torch_cache[key]

    def _torch_build(self, v: str) -> tuple[str | None, bool, str | None]:
        rel = self.matrix.torch.release(v)
        hw = self.hw
        if rel is None:
            if not hw.ccs and hw.driver is None:
                return None, True, None
            return None, False, f"torch {v} is not in matrix/torch.toml (its CUDA builds are unknown)"
        if not rel.python.contains(self.python, prereleases=True):
            return None, False, f"torch {v} has no wheels for Python {self.python} ({rel.python})"
        if not hw.ccs and hw.driver is None:
            return rel.default_variant, True, None
        variants = [rel.default_variant] + sorted(
            (x for x in rel.variants if x != rel.default_variant and variant_cuda(x)),
            key=lambda x: Version(variant_cuda(x) or "0"),
            reverse=True,
        )
        problems: list[str] = []
        fallback: str | None = None
        for variant in variants:
            cuda = variant_cuda(variant)
            if cuda is None:
                continue  # cpu / rocm builds do not use an NVIDIA GPU
            missing = [
                (cc, name) for cc, name in hw.ccs if self.matrix.torch.runs_on(v, variant, cc) is not True
            ]
            if missing:
                cc, name = missing[0]
                problems.append(f"{variant} has no {_sm(cc)} ({name})")
                continue
            if hw.driver is not None:
                support = self.matrix.cuda.driver_runs(hw.driver, cuda)
                if support == "no" or (support == "minor-compat" and not self.minor_compat):
                    if support == "minor-compat" and fallback is None:
                        fallback = variant
                    need = self.matrix.cuda.min_driver(cuda)
                    problems.append(f"{variant} needs driver >= {_driver_text(need)}" if need else f"{variant} needs a newer driver")
                    continue
            return variant, variant == rel.default_variant, None
        if not problems:
            return None, False, f"torch {v} has no CUDA build"
        if all("has no sm_" in p for p in problems):
            cc, name = next((cc, n) for cc, n in hw.ccs if any(_sm(cc) in p for p in problems))
            return None, False, f"no torch {v} build has {_sm(cc)} ({name})"
        if all("needs" in p for p in problems):
            return None, False, (
                f"every torch {v} build needs a newer driver than {hw.driver} (CUDA <= {hw.max_cuda})"
                + (f"; {fallback} would run under minor-version compatibility (--minor-compat)" if fallback else "")
            )
        return None, False, f"no torch {v} build fits: " + "; ".join(problems)

    def release_fits(self, name: str, release, extension_gate: bool = True) -> str | None:
        """None when the release fits the target, else why not."""
        v = release.version
        if release.requires_python is not None and not release.requires_python.contains(self.python, prereleases=True):
            return f"{name} {v} requires Python {release.requires_python}"
        if extension_gate:
            ext = self.extensions.find(name)
            if ext is not None:
                return self._extension_fits(ext, v)
        return None

    def _extension_fits(self, ext, v: Version) -> str | None:
        if ext.min_compute_capability is not None:
            old = [(cc, n) for cc, n in self.hw.ccs if Version(cc) < Version(ext.min_compute_capability)]
            if old:
                return f"{ext.package} needs compute capability >= {ext.min_compute_capability}; {old[0][1]} is {_sm(old[0][0])}"
        row = ext.release(v)
        if row is None:
            return f"{ext.package} {v}: its prebuilt wheels are not in matrix/extensions.toml"
        if not row.python.contains(self.python, prereleases=True):
            return f"{ext.package} {v} has no wheels for Python {self.python}"
        return None

    def extension_needs(self, cand: Candidate) -> list[Need]:
        ext = self.extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras:
            return []
        row = ext.release(cand.version)
        if row is None:
            return []
        return [Need(name="torch", extras=frozenset(), specifier=row.torch, why=f"{cand.label()} (prebuilt wheels)")]


class _Provider:
    """resolvelib provider over the release snapshot."""

    def __init__(
        self,
        matrix: Matrix,
        filters: _Filters,
        constraints: Mapping[str, Sequence[Need]],
        excluded: Mapping[str, Sequence[tuple[SpecifierSet, str]]],
        preferred: Mapping[str, Version],
        user: frozenset[str],
    ) -> None:
        self.matrix = matrix
        self.filters = filters
        self.constraints = constraints
        self.excluded = excluded
        self.preferred = preferred
        self.user = user
        self._releases: dict[str, object] = {}
        self._fits: dict[tuple[str, str], bool] = {}
        self._dead: dict[tuple[str, str, frozenset[str]], str | None] = {}

    # resolvelib interface -------------------------------------------------

    def identify(self, requirement_or_candidate) -> str:
        return requirement_or_candidate.identifier

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes) -> tuple:
        pinned = any(
            any(s.operator in ("==", "===") for s in info.requirement.specifier) for info in information[identifier]
        )
        causes = {c.requirement.name for c in backtrack_causes}
        name = identifier.split("[")[0]
        # Exact pins and conflict sources first (fail fast), torch last: many packages narrow it.
        return (not pinned, name not in causes, name == "torch", name not in self.user, identifier)

    def find_matches(self, identifier, requirements, incompatibilities) -> list[Candidate]:
        name = identifier.split("[")[0]
        extras = frozenset(identifier[len(name) + 1 : -1].split(",")) if "[" in identifier else frozenset()
        needs = list(requirements[identifier]) + list(self.constraints.get(name, ()))
        bad = {c.version for c in incompatibilities[identifier]}
        releases = self._get(name)
        if releases is None:
            return [Candidate(name=name, version=None, extras=extras)] if None not in bad else []
        spec = SpecifierSet()
        for need in needs:
            spec &= need.specifier
        exact = {
            Version(s.version)
            for need in needs
            for s in need.specifier
            if s.operator in ("==", "===") and "*" not in s.version
        }
        out = []
        for release in reversed(releases.releases):
            v = release.version
            if v in bad or not _contains(spec, v, True if v in exact else None):
                continue
            if any(_contains(s, v, True) for s, _ in self.excluded.get(name, ())):
                continue
            key = (name, str(v))
            if release.yanked and v not in exact:
                self.filters.rejected[key] = f"{name} {v} is yanked" + (f" ({release.yanked_reason})" if release.yanked_reason else "")
                continue
            why = self.filters.release_fits(name, release)
            variant, is_default = None, True
            if why is None and name == "torch":
                variant, is_default, why = self.filters.torch_build(v)
                if why is None and not self.filters.same_major_as_default(v, variant):
                    asker = next((n.why for n in needs if n.default_build), None)
                    if asker is not None:
                        why = (f"{asker} ships kernels for the CUDA major of torch {v}'s public-index build; "
                               f"the {variant} build that fits this hardware has another")
            if why is not None:
                self.filters.rejected[key] = why
                continue
            known = isinstance(release.requires, tuple)  # Unknown (sdist only) or, in old snapshots, None
            dead = self._dead_dependency(name, v, release.requires if known else (), extras)
            if dead is not None:
                self.filters.rejected[key] = dead
                continue
            out.append(
                Candidate(
                    name=name,
                    version=v,
                    extras=extras,
                    variant=variant,
                    default_variant=is_default,
                    requires=release.requires if known else (),
                    requires_known=known,
                )
            )
        want = self.preferred.get(name)
        if want is not None:
            out.sort(key=lambda c: c.version != want)  # stable: newest-first order kept otherwise
        return out

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        if candidate.version is None:
            return True
        if requirement.default_build and not self.filters.same_major_as_default(candidate.version, candidate.variant):
            return False
        return _contains(requirement.specifier, candidate.version, True)

    def get_dependencies(self, candidate: Candidate) -> list[Need]:
        if candidate.version is None:
            return []
        deps: list[Need] = []
        if candidate.extras:
            deps.append(
                Need(name=candidate.name, extras=frozenset(), specifier=SpecifierSet(f"=={candidate.version}"), why=candidate.label())
            )
        for req in candidate.requires:
            if not self.filters.markers_hold(req, candidate.extras):
                continue
            dep = str(canonicalize_name(req.name))
            deps.append(
                Need(
                    name=dep,
                    extras=frozenset(str(canonicalize_name(e)) for e in req.extras),
                    specifier=req.specifier,
                    why=candidate.label() + (f"[{','.join(sorted(candidate.extras))}]" if candidate.extras else ""),
                    default_build=dep == "torch" and candidate.name in BUILT_AGAINST_DEFAULT_TORCH,
                )
            )
        deps.extend(self.filters.extension_needs(candidate))
        return deps

    def narrow_requirement_selection(self, identifiers, resolutions, candidates, information, backtrack_causes):
        return identifiers

    # ----------------------------------------------------------------------

    def _dead_dependency(self, name: str, version: Version, requires, extras: frozenset[str]) -> str | None:
        key = (name, str(version), extras)
        if key not in self._dead:
            self._dead[key] = self._find_dead(name, version, requires, extras)
        return self._dead[key]

    def _find_dead(self, name: str, version: Version, requires, extras: frozenset[str]) -> str | None:
        """Why a release can never be part of the set: a requirement no release fits (one level of lookahead).

        Without it the resolver discovers, one vLLM release after another, that each pinned torch
        has no build for this GPU or driver; pruning here keeps a lock well under a second.
        """
        for req in requires:
            if not self.filters.markers_hold(req, frozenset()) and not (extras and self.filters.markers_hold(req, extras)):
                continue
            dep = str(canonicalize_name(req.name))
            if not self._any_fits(dep, req.specifier, default_build=dep == "torch" and name in BUILT_AGAINST_DEFAULT_TORCH):
                verb = "pins" if _is_exact(req.specifier) else "requires"
                why = self._first_reason(dep, req.specifier)
                return f"{name} {version} {verb} {dep}{req.specifier}" + (f"; {why}" if why else "")
        return None

    def _any_fits(self, name: str, spec: SpecifierSet, *, default_build: bool = False) -> bool:
        key = (name, str(spec), default_build)
        if key not in self._fits:
            releases = self._get(name)
            if releases is None:
                self._fits[key] = True
            else:
                need = Need(name=name, extras=frozenset(), specifier=spec, why="lookahead", default_build=default_build)
                self._fits[key] = bool(self._plain_matches(name, releases, [need]))
        return self._fits[key]

    def _plain_matches(self, name, releases, needs) -> list[Version]:
        spec = SpecifierSet()
        for need in list(needs) + list(self.constraints.get(name, ())):
            spec &= need.specifier
        exact = _is_exact(spec)
        out = []
        for release in reversed(releases.releases):
            v = release.version
            if not _contains(spec, v, True if exact else None):
                continue
            if any(_contains(s, v, True) for s, _ in self.excluded.get(name, ())):
                continue
            if release.yanked and not exact:
                continue
            if self.filters.release_fits(name, release) is not None:
                continue
            if name == "torch":
                variant, _, why = self.filters.torch_build(v)
                if why is not None or (any(n.default_build for n in needs) and not self.filters.same_major_as_default(v, variant)):
                    continue
            out.append(v)
        return out

    def _first_reason(self, name: str, spec: SpecifierSet) -> str:
        releases = self._get(name)
        if releases is None:
            return ""
        for release in reversed(releases.releases):
            if spec.contains(release.version, prereleases=True):
                why = self.filters.release_fits(name, release)
                if why is None and name == "torch":
                    why = self.filters.torch_build(release.version)[2]
                if why:
                    return why
        return f"no {name} release in {spec}" if str(spec) else ""

    def _get(self, name: str):
        if name not in self._releases:
            self._releases[name] = self.matrix.releases.get(name)
        return self._releases[name]


# ----------------------------------------------------------------------------- resolve


def parse_targets(targets: Sequence[str]) -> tuple[Need, ...]:
    needs = []
    for text in targets:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise UsageError(f"target {text!r} is not a requirement (e.g. 'trl[vllm]>=0.15'): {exc}") from exc
        if req.url:
            raise UsageError(f"target {text!r}: URL requirements cannot be locked from the matrix")
        needs.append(
            Need(
                name=str(canonicalize_name(req.name)),
                extras=frozenset(str(canonicalize_name(e)) for e in req.extras),
                specifier=req.specifier,
                why="target",
            )
        )
    if not needs:
        raise UsageError("give at least one target (e.g. 'trl[vllm]')")
    return tuple(needs)


def resolve(
    targets: Sequence[str],
    facts: Facts,
    matrix: Matrix,
    *,
    prefer_installed: bool = False,
    minor_compat: bool = False,
    extensions: ExtensionTable | None = None,
) -> Lock:
    """The newest set that meets `targets` on the target in `facts`; raises ResolutionError when there is none.

    `facts` is the target: its python markers (see `target_facts`), hardware and launch. With
    `prefer_installed`, the installed version of each package is tried first.
    """
    needs = parse_targets(targets)
    extensions = extensions if extensions is not None else matrix.extensions
    hw = _hardware(facts, matrix)
    filters = _Filters(facts, matrix, extensions, hw, minor_compat)
    preferred: dict[str, Version] = {}
    if prefer_installed and not isinstance(facts.packages, Unknown):
        for dist in facts.packages:
            try:
                preferred[dist.name] = Version(Version(dist.version).public)
            except ValueError:
                continue
    user = frozenset(n.name for n in needs)
    state = _State(constraints={}, excluded={}, imposed=(), tried=frozenset())
    try:
        mapping, criteria, imposed = _search(state, needs, facts, matrix, filters, extensions, preferred, user)
    except _Conflict as conflict:
        raise conflict.explain() from None
    lock = _build_lock(targets, facts, matrix, hw, mapping, criteria, imposed, extensions, filters)
    left = _still_matching(mapping, facts, matrix)
    if left:
        lock = dataclasses.replace(lock, notes=lock.notes + tuple(left))
    return lock


class _Conflict(Exception):
    """No set on one branch of the search; explained (which is slow) only if every branch fails."""

    def __init__(self, causes, provider, imposed) -> None:
        super().__init__("no compatible set")
        self.causes, self.provider, self.imposed = causes, provider, imposed

    def explain(self) -> ResolutionError:
        return ResolutionError(explain_conflict(self.causes, self.provider, self.imposed))


def _run(provider, needs, filters, matrix, imposed):
    from resolvelib import BaseReporter, Resolver
    from resolvelib.resolvers import ResolutionImpossible, ResolutionTooDeep

    try:
        result = Resolver(provider, BaseReporter()).resolve(needs, max_rounds=10000)
    except ResolutionImpossible as exc:
        raise _Conflict(exc.causes, provider, imposed) from exc
    except ResolutionTooDeep as exc:
        raise ResolutionError(("the search gave up after too many rounds; pin one of the targets more tightly",)) from exc
    return result.mapping, result.criteria


def _extension_cuda_mismatch(mapping, extensions: ExtensionTable):
    """An extension whose prebuilt wheels are not built for the CUDA major of the chosen torch build."""
    torch = mapping.get("torch")
    cuda = variant_cuda(torch.variant or "") if torch is not None else None
    if cuda is None:
        return None
    major = int(cuda.split(".")[0])
    for cand in mapping.values():
        ext = extensions.find(cand.name)
        if ext is None or cand.version is None or cand.extras:
            continue
        row = ext.release(cand.version)
        if row is not None and major not in row.cuda_majors:
            return cand.name, cand.version, f"{cand.name} {cand.version} has no wheels for CUDA {major} torch builds"
    return None


def _facts_with(facts: Facts, mapping: Mapping[str, Candidate]) -> Facts:
    """The target facts with the resolved set installed: what the catalog will see after `pip install`."""
    dists = []
    torch = None
    for ident, cand in mapping.items():
        if "[" in ident or cand.version is None:
            continue
        version = str(cand.version) + (f"+{cand.variant}" if cand.variant and not cand.default_variant else "")
        dists.append(Distribution(name=cand.name, version=version, requires=tuple(str(r) for r in cand.requires)))
        if cand.name == "torch":
            cuda = variant_cuda(cand.variant or "")
            torch = TorchBuild(
                version=version,
                cuda=cuda if cand.variant else Unknown(reason="torch build variant not curated"),
                cudnn=Unknown(reason="not installed yet"),
                nccl=Unknown(reason="not installed yet"),
                arch_list=Unknown(reason="not installed yet"),
                cxx11_abi=Unknown(reason="not installed yet"),
                source=TorchSource.DECLARED,
            )
    return dataclasses.replace(facts, packages=tuple(sorted(dists, key=lambda d: d.name)), torch=torch)


def _exposure(when, facts: Facts):
    """The clause as a lock judges it: without a script, the script may do anything the catalog knows."""
    from compat.matrix.when import ScriptWhen

    if facts.script is None and not when.script.is_empty():
        return dataclasses.replace(when, script=ScriptWhen())
    return when


def _known_failure(mapping, facts: Facts, matrix: Matrix, tried: set[str]):
    from compat.judge.conditions import evaluate

    installed = _facts_with(facts, mapping)
    for sig in sorted(matrix.signatures, key=lambda s: s.id):
        # Only a version fix can be imposed; conditions on packages are what a lock can change.
        if sig.id in tried or not sig.when.packages or not sig.fix.requires:
            continue
        verdict = evaluate(_exposure(sig.when, facts), installed)
        if verdict.matched:
            return sig, verdict
    return None


def _still_matching(mapping, facts: Facts, matrix: Matrix) -> list[str]:
    from compat.judge.conditions import evaluate

    installed = _facts_with(facts, mapping)
    out = []
    for sig in sorted(matrix.signatures, key=lambda s: s.id):
        if sig.when.packages and sig.fix.requires and evaluate(_exposure(sig.when, facts), installed).matched:
            out.append(f"known failure {sig.id} still applies ({sig.title}): {sig.fix.advice or ', '.join(sig.fix.requires)}")
    return out


@dataclass(frozen=True, kw_only=True)
class _State:
    """What the catalog has imposed so far on one branch of the search."""

    constraints: Mapping[str, tuple[Need, ...]]
    excluded: Mapping[str, tuple[tuple[SpecifierSet, str], ...]]
    imposed: tuple[Constraint, ...]
    tried: frozenset[str]


def _search(state: _State, needs, facts, matrix, filters, extensions, preferred, user):
    """Resolve; when the result hits a known failure, try each way out of it in turn (its fix first)."""
    provider = _Provider(matrix, filters, state.constraints, state.excluded, preferred, user)
    mapping, criteria = _run(provider, needs, filters, matrix, state.imposed)
    wrong_cuda = _extension_cuda_mismatch(mapping, extensions)
    if wrong_cuda is not None:
        name, version, why = wrong_cuda
        filters.rejected[(name, str(version))] = why
        excluded = {**state.excluded, name: state.excluded.get(name, ()) + ((SpecifierSet(f"=={version}"), why),)}
        return _search(dataclasses.replace(state, excluded=excluded), needs, facts, matrix, filters, extensions, preferred, user)
    hit = _known_failure(mapping, facts, matrix, state.tried)
    if hit is None:
        return mapping, criteria, state.imposed
    sig, verdict = hit
    first_error: Exception | None = None
    for option in _ways_out(sig, verdict, needs, matrix, state):
        try:
            return _search(option, needs, facts, matrix, filters, extensions, preferred, user)
        except (_Conflict, ResolutionError) as exc:
            first_error = first_error or exc
    if first_error is None:
        raise ResolutionError((f"every set that meets the targets hits known failure {sig.id} ({sig.title})",))
    raise first_error


def _ways_out(sig, verdict, needs, matrix, state: _State) -> Iterator[_State]:
    """States that keep the next resolution off `sig`: its version fix, else leaving one of its package ranges."""
    why = ", ".join(verdict.evidence)
    user = {n.name: n.specifier for n in needs}
    tried = state.tried | {sig.id}
    for text in sig.fix.requires:
        req = Requirement(text)
        name = str(canonicalize_name(req.name))
        if name in user and _disjoint(user[name], req.specifier, matrix.releases.get(name)):
            continue  # the user asked for versions the fix rules out
        need = Need(name=name, extras=frozenset(), specifier=req.specifier, why=f"catalog: {sig.id}")
        yield dataclasses.replace(
            state,
            constraints={**state.constraints, name: state.constraints.get(name, ()) + (need,)},
            imposed=state.imposed + (Constraint(requirement=f"{name}{req.specifier}", signature=sig.id, why=why),),
            tried=tried,
        )
    for name, spec in sig.when.packages:
        if name in user and _is_exact(user[name]):
            continue  # an exact pin cannot move
        yield dataclasses.replace(
            state,
            excluded={**state.excluded, name: state.excluded.get(name, ()) + ((spec, sig.id),)},
            imposed=state.imposed + (
                Constraint(requirement=f"{name} not {spec}" if str(spec) else f"no {name}", signature=sig.id, why=why),
            ),
            tried=tried,
        )


def _is_exact(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def _disjoint(user: SpecifierSet, fix: SpecifierSet, releases) -> bool:
    """Whether no recorded release meets both what the user asked for and the fix."""
    if releases is None:
        return False
    both = user & fix
    return not any(both.contains(r.version, prereleases=True) for r in releases.releases)


# ----------------------------------------------------------------------------- conflicts


def explain_conflict(causes, provider: _Provider, imposed: Sequence[Constraint]) -> tuple[str, ...]:
    """resolvelib's causes (requirement + parent) as lines a person can act on."""
    lines: list[str] = []
    by_name: dict[str, list] = {}
    for info in causes:
        by_name.setdefault(info.requirement.name, []).append(info)
    for name in sorted(by_name):
        infos = by_name[name]
        asks = []
        for info in infos:
            req = info.requirement
            who = "you ask for" if info.parent is None else f"{_label(info.parent)} {'pins' if _is_pin(req) else 'requires'}"
            if req.why.startswith("catalog: "):
                who = f"the catalog ({req.why[9:]}) requires"
            asks.append(f"{who} {req.text()}")
        for need in provider.constraints.get(name, ()):
            asks.append(f"the catalog ({need.why.removeprefix('catalog: ')}) requires {need.text()}")
        reason = _why_none(name, infos, provider)
        line = "; ".join(asks)
        if reason:
            line += f"; {reason}"
        hint = _hint(name, infos, provider)
        if hint:
            line += f"; {hint}"
        lines.append(line)
    for c in imposed:
        lines.append(f"(to avoid {c.signature}, the lock also required {c.requirement}: {c.why})")
    return tuple(dict.fromkeys(lines))


def _label(cand: Candidate) -> str:
    return cand.label() + (f"[{','.join(sorted(cand.extras))}]" if cand.extras else "")


def _is_pin(need: Need) -> bool:
    return any(s.operator in ("==", "===") for s in need.specifier)


def _why_none(name: str, infos, provider: _Provider) -> str:
    """Why the releases the requirements ask for were all dropped (or that they contradict each other)."""
    releases = provider._get(name)
    if releases is None:
        return ""
    spec = SpecifierSet()
    for info in infos:
        spec &= info.requirement.specifier
    for s in provider.constraints.get(name, ()):
        spec &= s.specifier
    matching = [r for r in reversed(releases.releases) if spec.contains(r.version, prereleases=True)]
    if not matching:
        wanted = [r for r in reversed(releases.releases) if any(i.requirement.specifier.contains(r.version, prereleases=True) for i in infos)]
        if len(infos) > 1 and wanted:
            return "no release meets all of these at once"
        return f"the matrix has no {name} release in {spec}" if str(spec) else f"the matrix has no {name} release"
    reasons = []
    for r in matching:
        why = provider.filters.rejected.get((name, str(r.version)))
        if why is None:
            provider.find_matches(name, {name: list(i.requirement for i in infos)}, {name: []})
            why = provider.filters.rejected.get((name, str(r.version)))
        if why and why not in reasons:
            reasons.append(why)
    if not reasons:
        return ""
    shown = reasons[:2] + ([f"and {len(reasons) - 2} more"] if len(reasons) > 2 else [])
    return "; ".join(shown)


def _hint(name: str, infos, provider: _Provider) -> str:
    """The oldest release of a parent whose requirement on `name` the target can meet ("use vllm >= 0.9.0")."""
    hints = []
    for info in infos:
        parent = info.parent
        if parent is None:
            newer = _newer_viable(name, info.requirement, provider)
            if newer is not None:
                hints.append(f"use {name} >= {newer}")
            continue
        if parent.version is None:
            continue
        releases = provider._get(parent.name)
        if releases is None:
            continue
        for r in releases.releases:
            if r.version <= parent.version or not isinstance(r.requires, tuple) or r.yanked:
                continue
            if provider.filters.release_fits(parent.name, r) is not None:
                continue
            reqs = [q for q in r.requires if canonicalize_name(q.name) == name and provider.filters.markers_hold(q, parent.extras)]
            if reqs and _has_fitting(name, reqs, provider):
                hints.append(f"use {parent.name} >= {r.version}")
                break
    text = " or ".join(dict.fromkeys(hints))
    rejected = list(provider.filters.rejected.values())
    if text and any("sm_" in r for r in rejected):
        text += " or another GPU"
    elif text and any("driver" in r for r in rejected):
        text += " or a newer driver"
    return text


def _newer_viable(name: str, need: Need, provider: _Provider) -> Version | None:
    """The oldest release newer than every version `need` allows that fits the target (a target's way out)."""
    releases = provider._get(name)
    if releases is None:
        return None
    asked = [r.version for r in releases.releases if need.specifier.contains(r.version, prereleases=True)]
    if not asked:
        return None
    found = provider.find_matches(name, {name: [Need(name=name, extras=frozenset(), specifier=SpecifierSet(), why="hint")]}, {name: []})
    newer = [c.version for c in found if c.version is not None and c.version > max(asked)]
    return min(newer) if newer else None


def _has_fitting(name: str, reqs, provider: _Provider) -> bool:
    spec = SpecifierSet()
    for q in reqs:
        spec &= q.specifier
    found = provider.find_matches(name, {name: [Need(name=name, extras=frozenset(), specifier=spec, why="hint")]}, {name: []})
    return bool(found)


# ----------------------------------------------------------------------------- the lock


def _build_lock(targets, facts, matrix, hw, mapping, criteria, imposed, extensions, filters) -> Lock:
    pins: list[Pin] = []
    unpinned: list[str] = []
    notes: list[str] = list(hw.notes)
    extras_of: dict[str, set[str]] = {}
    for ident, cand in mapping.items():
        if cand.extras:
            extras_of.setdefault(cand.name, set()).update(cand.extras)
    torch = mapping.get("torch")
    torch_variant = torch.variant if torch is not None and not torch.default_variant else None
    for ident in sorted(mapping):
        cand = mapping[ident]
        if cand.extras:
            continue
        reasons = _reasons(criteria, ident, mapping)
        exact_target = any(info.parent is None and _is_exact(info.requirement.specifier) for info in criteria[ident].information)
        if cand.version is None or (cand.name in FLOATING and not exact_target):
            spec = SpecifierSet()
            for info in criteria[ident].information:
                spec &= info.requirement.specifier
            unpinned.append(f"{cand.name}{spec}")
            continue
        if not cand.requires_known and extensions.find(cand.name) is None:
            notes.append(f"{cand.label()}: its requirements are unknown to the matrix (sdist only); pip resolves them")
        local = None
        index = None
        if cand.name == "torch" and torch_variant:
            local = torch_variant
        elif cand.name in TORCH_COMPANIONS and torch_variant:
            local = torch_variant
        if local:
            index = matrix.torch.index_url(local)
        if cand.name == "torch" and cand.variant:
            cuda = variant_cuda(cand.variant)
            build = f"{cand.variant} build" + (f" (CUDA {cuda})" if cuda else "")
            if hw.ccs:
                build += " has " + ", ".join(_sm(cc) for cc, _ in hw.ccs)
            if hw.driver is not None and cuda:
                build += f", runs on driver {hw.driver}"
            if not cand.default_variant:
                build += "; not the public index's default build"
            reasons = reasons + (build,)
        for c in imposed:
            if re.match(r"(?:no )?([a-z0-9._-]+)", c.requirement).group(1) == cand.name:
                reasons = reasons + (f"kept off {c.signature}: {c.requirement}",)
        ext = extensions.find(cand.name)
        pins.append(
            Pin(
                name=cand.name,
                version=str(cand.version),
                local=local,
                extras=tuple(sorted(extras_of.get(cand.name, ()))),
                reasons=reasons,
                index_url=index,
                after_torch=ext is not None,
            )
        )
        if ext is not None:
            notes.append(
                f"{cand.name} compiles against torch: install it after the rest with "
                f"`pip install --no-build-isolation {cand.name}=={cand.version}`"
            )
    return Lock(
        schema_version=SCHEMA_VERSION,
        targets=tuple(targets),
        python_version=".".join(facts.python.version.split(".")[:2]),
        platform=platform_name(facts),
        hardware=hardware_lines(facts, hw),
        pins=tuple(pins),
        unpinned=tuple(sorted(unpinned)),
        constraints=tuple(imposed),
        notes=tuple(dict.fromkeys(notes)),
    )


def _reasons(criteria, ident: str, mapping) -> tuple[str, ...]:
    out = []
    names = [i for i in criteria if i == ident or i.startswith(ident + "[")]
    for name in names:
        for info in criteria[name].information:
            req: Need = info.requirement
            if info.parent is None:
                out.append("target " + req.text() if str(req.specifier) or req.extras else "target")
            elif info.parent.name == req.name:
                continue  # an extra's link to its own base
            else:
                verb = "pins" if _is_pin(req) else "requires"
                parent = info.parent.label() + (f"[{','.join(sorted(info.parent.extras))}]" if info.parent.extras else "")
                out.append(f"{parent} {verb} {req.name}{req.specifier}" if str(req.specifier) else f"{parent} requires {req.name}")
    return tuple(sorted(dict.fromkeys(out)))
