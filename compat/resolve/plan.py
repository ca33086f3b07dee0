"""From an installed environment to a good set: ordered install steps, each tied to the findings it clears.

Order matters with torch stacks: a torch build from another index must replace the installed one
before anything that pins it is installed (or pip pulls the public index's build back in), and
extensions compiled against torch (flash-attn) must be rebuilt last, against the new torch,
without build isolation. compat never runs these commands; it prints them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.judge.checks.requirements import MET_BY_EVERY_LOCK
from compat.judge.commands import pip_command
from compat.model.facts import Distribution, Facts
from compat.model.findings import Finding, Severity, Status
from compat.model.lock import (
    PLAN_SCHEMA_VERSION,
    Installer,
    Kept,
    Lock,
    Pin,
    Plan,
    Step,
    StepKind,
    Uncleared,
)
from compat.model.unknown import Unknown


def default_targets(facts: Facts, tracked: Sequence[str]) -> tuple[str, ...]:
    """The installed tracked packages that no other installed tracked package requires (the top level)."""
    if isinstance(facts.packages, Unknown):
        return ()
    present = {d.name: d for d in facts.packages if d.name in tracked}
    required: set[str] = set()
    for dist in present.values():
        for line in dist.requires:
            try:
                req = Requirement(line)
            except ValueError:
                continue
            if req.marker is not None and "extra" in str(req.marker):
                continue
            required.add(str(canonicalize_name(req.name)))
    return tuple(_with_extras(present[name], present, frozenset(tracked), frozenset(required))
                 for name in sorted(present) if name not in required)


def _with_extras(dist: Distribution, present: Mapping[str, Distribution], tracked: frozenset[str], required: frozenset[str]) -> str:
    """`trl[vllm]` when every tracked package trl's [vllm] extra asks for is installed and one of them is there for
    the extra's sake (nothing installed requires it otherwise): the plan keeps the extra. trl[kernels] asks only for
    transformers[kernels], which trl requires anyway: that is no sign anybody installed the extra."""
    wanted: dict[str, set[str]] = {}
    for line in dist.requires:
        try:
            req = Requirement(line)
        except ValueError:
            continue
        extra = _extra_of(req)
        if extra is None:
            continue
        name = str(canonicalize_name(req.name))
        if name in tracked:
            wanted.setdefault(extra, set()).add(name)
    held = {e: names for e, names in wanted.items() if names and names <= present.keys() and names - required}
    # The smallest extras that explain what is installed: trl[peft] rather than trl[dev], which asks for peft too
    # (a package [dev] adds that is installed for its own sake is a target of its own anyway).
    extras = sorted(e for e, names in held.items()
                    if not any(other < names or (other == names and o < e) for o, other in held.items() if o != e))
    return f"{dist.name}[{','.join(extras)}]" if extras else dist.name


_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


def _extra_of(req: Requirement) -> str | None:
    found = _EXTRA.search(str(req.marker)) if req.marker is not None else None
    return str(canonicalize_name(found.group(1))) if found else None


def fix_requirements(findings: Sequence[Finding]) -> tuple[str, ...]:
    """The version fixes of the errors doctor found, as extra targets.

    Only errors: a warning is a risk under some conditions, and upgrading trl a major release to
    clear one would move far more than the problem asks for (the lock notes what still applies).
    """
    out: list[str] = []
    for f in findings:
        if f.status is Status.FOUND and f.severity is Severity.ERROR and f.id not in MET_BY_EVERY_LOCK:
            out.extend(f.fix.requires)
    return tuple(dict.fromkeys(out))


def plan(
    facts: Facts,
    lock: Lock,
    findings: Sequence[Finding] = (),
    *,
    installer: Installer = Installer.PIP,
    python: str | None = None,
) -> Plan:
    """Steps from `facts` (installed) to `lock`: uninstall, torch, packages, extensions."""
    installed: dict[str, str] = {}
    if not isinstance(facts.packages, Unknown):
        installed = {d.name: d.version for d in facts.packages}
    changed = [p for p in lock.pins if installed.get(p.name) != p.full_version and not _same(installed.get(p.name), p)]
    kept_pins = [p for p in lock.pins if p not in changed and p.name in installed]
    torch_moves = any(p.name == "torch" for p in changed)
    # Companions ride with torch from its index; without a torch change they are ordinary packages.
    torch_family = [p for p in changed if p.name in ("torch", "torchvision", "torchaudio")] if torch_moves else []
    extensions = [p for p in lock.pins if p.after_torch and (p in changed or (torch_moves and p.name in installed))]
    packages = [p for p in changed if p not in torch_family and p not in extensions]

    steps: list[Step] = []
    remove = sorted(
        {p.name for p in torch_family if p.name in installed and _other_build(installed[p.name], p)}
        | {p.name for p in extensions if p.name in installed}
    )
    if remove:
        steps.append(Step(
            kind=StepKind.UNINSTALL,
            packages=tuple(remove),
            command=_cmd(installer, python, "uninstall", remove),
        ))
    if torch_family:
        index = next((p.index_url for p in torch_family if p.index_url), None)
        reqs = [_req(p) for p in torch_family]
        extra = ["--index-url", index] if index else []
        steps.append(Step(
            kind=StepKind.TORCH,
            packages=tuple(reqs),
            command=_cmd(installer, python, "install", reqs + extra),
            index_url=index,
            reasons=tuple(r for p in torch_family for r in p.reasons[-1:]),
        ))
    if packages:
        reqs = [_req(p) for p in packages]
        extra = []
        # Only a build this step installs needs the PyTorch index: pip keeps an installed torch 2.6.0+cu118 for
        # a `torch==2.6.0` requirement, and an index nobody needs costs retries where it cannot be reached.
        index = next((p.index_url for p in packages if p.index_url), None)
        if index:
            extra = ["--extra-index-url", index]
        steps.append(Step(
            kind=StepKind.PACKAGES,
            packages=tuple(reqs),
            command=_cmd(installer, python, "install", reqs + extra),
        ))
    if extensions:
        reqs = [p.requirement(extras=False) for p in extensions]  # another publisher's wheel by its URL
        steps.append(Step(
            kind=StepKind.EXTENSIONS,
            packages=tuple(reqs),
            command=_cmd(installer, python, "install", ["--no-build-isolation", *reqs]),
        ))
    steps = _attach_findings(steps, findings, lock)
    kept = tuple(Kept(name=p.name, version=installed[p.name]) for p in kept_pins if p not in extensions)
    uncleared = tuple(
        Uncleared(finding=f.id, advice=f.fix.advice or None)
        for f in findings
        if f.status is Status.FOUND and not any(f.id in s.clears for s in steps)
    )
    return Plan(schema_version=PLAN_SCHEMA_VERSION, lock=lock, steps=tuple(steps), kept=kept, uncleared=uncleared)


def _same(installed: str | None, pin: Pin) -> bool:
    if installed is None:
        return False
    try:
        have = Version(installed)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return False
    if pin.local is None:
        # Any CUDA build of the pinned version stays; a CPU or ROCm one (2.6.0+cpu) is not the
        # public index's build the lock asks for, although `torch==2.6.0` matches its version.
        cpu_or_rocm = have.local is not None and not have.local.startswith("cu")
        return have.public == pin.version and not cpu_or_rocm
    return have.public == pin.version and have.local == pin.local


def _other_build(installed: str, pin: Pin) -> bool:
    """The installed build must go first: pip would keep it, its version matching the pin's."""
    have = _local(installed)
    if pin.local is not None:
        return have != pin.local
    return have is not None and not have.startswith("cu")


def _local(version: str) -> str | None:
    try:
        return Version(version).local
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return None


def _req(pin: Pin) -> str:
    return pin.requirement()


def _cmd(installer: Installer, python: str | None, verb: str, args: Sequence[str]) -> tuple[str, ...]:
    return pip_command(installer, python, verb, args)


def _attach_findings(steps: list[Step], findings: Sequence[Finding], lock: Lock) -> list[Step]:
    """A finding is cleared by the step that installs a version its fix asks for."""
    out = []
    for step in steps:
        names = {str(canonicalize_name(Requirement(r).name)) for r in step.packages} if step.kind is not StepKind.UNINSTALL else set()
        clears = []
        for f in findings:
            if f.status is not Status.FOUND or not f.fix.requires:
                continue
            for text in f.fix.requires:
                req = Requirement(text)
                name = str(canonicalize_name(req.name))
                pin = lock.pin(name)
                if name in names and pin is not None and req.specifier.contains(pin.version, prereleases=True):
                    clears.append(f.id)
                    break
        out.append(dataclasses.replace(step, clears=tuple(sorted(set(clears)))))
    return out
