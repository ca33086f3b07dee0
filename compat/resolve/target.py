"""The target a lock is resolved for: interpreter and platform markers, declared or probed."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from compat.errors import UsageError
from compat.model.asker import Asker, AskerKind
from compat.model.facts import SCHEMA_VERSION as FACTS_SCHEMA_VERSION
from compat.model.facts import Facts, Hardware, HardwareSource, Launch, Python
from compat.model.torch_variant import TorchVariant
from compat.model.unknown import Unknown
from compat.resolve.provider import Need

PLATFORMS = {
    "linux-x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix"},
    "linux-aarch64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64", "os_name": "posix"},
    "macos-arm64": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64", "os_name": "posix"},
    "windows-amd64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64", "os_name": "nt"},
}


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
        if platform not in PLATFORMS:
            raise UsageError(f"--platform {platform!r}: expected one of {', '.join(sorted(PLATFORMS))}")
        markers.update(PLATFORMS[platform])
        declared.append("platform")
    major_minor = ".".join(version.split(".")[:2])
    full = {
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "implementation_version": version,
        "platform_release": "",
        "platform_version": "",
        **PLATFORMS["linux-x86_64"],
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
    why = Unknown(reason="not probed: the target was declared")
    base = Facts(
        schema_version=FACTS_SCHEMA_VERSION,
        python=Python(version=python_version, implementation="cpython", executable=why, markers={}, glibc=why),
        packages=why,
        torch=why,
        hardware=Hardware(source=HardwareSource.DECLARED, driver=why, driver_cuda=why, gpus=why, links=why),
        launch=Launch(launcher=why, accelerate=why, env={}, shm_bytes=why, container=None),
    )
    return target_facts(base, python_version=python_version, platform=platform or "linux-x86_64")


def platform_name(facts: Facts) -> str:
    m = facts.python.markers
    for name, env in sorted(PLATFORMS.items()):
        if all(m.get(k) == v for k, v in env.items() if k != "os_name"):
            return name
    return f"{m.get('sys_platform', '?')}-{m.get('platform_machine', '?')}"


# The packages published with torch's local build tags on the PyTorch index.
_TAGGED = frozenset({"torch", "torchvision", "torchaudio"})


def _split_local(text: str, name: str, spec: SpecifierSet) -> tuple[SpecifierSet, TorchVariant | None]:
    """`==2.6.0+cu126` as the public range `==2.6.0` and the build cu126."""
    variants: set[TorchVariant] = set()
    kept = []
    for clause in spec:
        version, plus, local = clause.version.partition("+")
        if not plus:
            kept.append(str(clause))
            continue
        if clause.operator not in ("==", "===") or name not in _TAGGED:
            raise UsageError(f"target {text!r}: a local build tag (+{local}) is only meaningful in an exact pin of "
                             f"{', '.join(sorted(_TAGGED))}")
        variant = TorchVariant.find(local)
        if variant is None:
            raise UsageError(f"target {text!r}: +{local} is not a torch build (cpu, cu126, rocm6.2, xpu)")
        variants.add(variant)
        kept.append(f"=={version}")
    if len(variants) > 1:
        raise UsageError(f"target {text!r}: two build tags ({', '.join(map(str, sorted(variants)))})")
    return SpecifierSet(",".join(kept)), (variants.pop() if variants else None)


@dataclass(frozen=True, kw_only=True)
class Targets:
    """What a lock or plan was asked for, read once: the check, the search and the lock share it."""

    asked: tuple[str, ...]
    """The requirement strings as given (the lock records them)."""
    needs: tuple[Need, ...]
    """The resolver's needs read from them."""

    def plus(self, other: Targets) -> Targets:
        """These targets, then `other`'s (each target is read on its own: nothing is parsed again)."""
        return Targets(asked=self.asked + other.asked, needs=self.needs + other.needs)


def read_targets(targets: Sequence[str]) -> Targets:
    """`targets` parsed once; raises UsageError as `parse_targets`."""
    return Targets(asked=tuple(targets), needs=parse_targets(targets))


def parse_targets(targets: Sequence[str]) -> tuple[Need, ...]:
    """The requirement strings asked for, as the resolver's needs."""
    needs = []
    for text in targets:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise UsageError(f"target {text!r} is not a requirement (e.g. 'trl[vllm]>=0.15'): {exc}") from exc
        if req.url:
            raise UsageError(f"target {text!r}: URL requirements cannot be locked from the matrix")
        if any(re.search(r"\d{19,}", s.version) for s in req.specifier):
            raise UsageError(f"target {text[:60]!r}...: a version number too long to compare")
        name = str(canonicalize_name(req.name))
        specifier, variant = _split_local(text, name, req.specifier)
        if variant is not None and name != "torch":
            # torchvision==0.21.0+cu126 names the torch build: the companions follow torch's tag.
            needs.append(Need(name="torch", extras=frozenset(), specifier=SpecifierSet(), asker=Asker(kind=AskerKind.TARGET),
                              variant=variant))
            variant = None
        needs.append(
            Need(
                name=name,
                extras=frozenset(str(canonicalize_name(e)) for e in req.extras),
                specifier=specifier,
                asker=Asker(kind=AskerKind.TARGET),
                variant=variant,
            )
        )
    if not needs:
        raise UsageError("give at least one target (e.g. 'trl[vllm]')")
    return tuple(needs)
