"""Renderers for `compat lock`: a requirements file, a constraints file, JSON, and why no set exists.

Pure: records in, str out. Every sentence about a lock, a pin, a rejected release or a conflict is
written here, from the kind and the facts of its record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from compat.errors import ResolutionError
from compat.matrix.torch import sm
from compat.model import codec
from compat.model.asker import Asker, AskerKind
from compat.model.conflict import (
    SEARCH_SECONDS_VARIABLE,
    Alternative,
    Ask,
    ConflictCause,
    ConflictKind,
    Shortfall,
)
from compat.model.lock import (
    Constraint,
    ConstraintKind,
    FullLock,
    HardwareSummary,
    Lock,
    LockNote,
    LockNoteKind,
    Pin,
    PinReason,
    PinReasonKind,
)
from compat.model.rejection import Rejection, RejectionKind
from compat.model.unknown import Unknown
from compat.printable import one_line
from compat.report.formats import LockFormat  # its home is the format table; imported here for render_lock's callers


def render_lock(lock: Lock, fmt: LockFormat) -> str:
    if fmt is LockFormat.JSON:
        return render_json(lock)
    return render_requirements(lock, constraints=fmt is LockFormat.CONSTRAINTS)


def render_json(lock: Lock) -> str:
    return json.dumps(codec.encode(lock), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_requirements(lock: Lock, *, constraints: bool = False) -> str:
    """A file pip and uv accept (`-r` or, with `constraints`, `-c`); every pin says why."""
    lines = [
        f"# compat lock {' '.join(lock.targets)}",
        f"# resolved for Python {lock.python_version} on {lock.platform}",
    ]
    lines += [f"#   {h}" for h in hardware_lines(lock.hardware)]
    for c in lock.constraints:
        lines.append(f"# kept off known failure {c.signature}: {constraint_text(c)} (it matched {', '.join(c.evidence)})")
    indexes = sorted({p.index_url for p in lock.pins if p.index_url})
    lines += [f"--extra-index-url {url}" for url in indexes]
    late: list[Pin] = []
    for pin in lock.pins:
        if pin.after_torch and not constraints:
            late.append(pin)
            continue
        lines.append(_line(pin, extras=not constraints))
    for req in lock.unpinned:
        lines.append(f"{req}  # range only: pip picks the version")
    for pin in late:
        lines.append(
            f"# {pin.name}=={pin.version}  # {'; '.join(reason_texts(pin))}; compiles against torch, so install it "
            f"after the rest: pip install --no-build-isolation {_late(pin)}"
        )
    lines += [f"# note: {note_text(n)}" for n in lock.notes]
    return "\n".join(lines) + "\n"


def render_full(full: FullLock) -> str:
    """`--full`: uv's complete file under compat's header; offline, the tracked pins and a header that says so."""
    lock = full.lock
    if full.text is None:
        reason = (full.offline or "").splitlines()[0] if full.offline else "uv could not run"
        head = [f"# tracked packages only ({len(lock.pins)} pins): uv pip compile could not close the set ({reason});",
                "# every other dependency is left to the installer, unpinned and without hashes"]
        return "\n".join(head) + "\n" + render_requirements(lock)
    head = [f"# compat lock {' '.join(lock.targets)} --full",
            f"# resolved for Python {lock.python_version} on {lock.platform}"]
    head += [f"#   {h}" for h in hardware_lines(lock.hardware)]
    head.append(f"# closed by uv pip compile --generate-hashes with compat's {len(lock.pins)} pins as constraints:")
    head += [f"#   {_line(p, extras=True)}" for p in lock.pins]
    late = [p for p in lock.pins if p.after_torch]
    head += [f"# then: pip install --no-build-isolation {_late(p)} (compiles against torch)" for p in late]
    return "\n".join(head) + "\n" + full.text


def _late(pin: Pin) -> str:
    """What installs an extension after torch: its URL when another publisher's wheel is the one, else name==version."""
    return pin.wheel if pin.wheel else f"{pin.name}=={pin.version}"


def _line(pin: Pin, *, extras: bool) -> str:
    why = "; ".join(reason_texts(pin))
    # A constraints file takes no URL: the build is pinned by its local version there.
    text = pin.requirement(extras=extras) if extras else f"{pin.name}=={pin.full_version}"
    return text + (f"  # {why}" if why else "")


# ----------------------------------------------------------------------------- pieces of a lock


def hardware_lines(hw: HardwareSummary) -> tuple[str, ...]:
    """One fact a line ("8x NVIDIA H100 80GB HBM3 (sm_90)", "driver 580.95.05 (CUDA <= 13.0)")."""
    lines = []
    if isinstance(hw.gpus, Unknown):
        lines.append("GPUs: unknown")
    elif not hw.gpus:
        lines.append("GPUs: none")
    else:
        for g in hw.gpus:
            label = g.name if g.compute_capability is None else f"{g.name} ({sm(g.compute_capability)})"
            lines.append(f"{g.count}x {label}")
    if isinstance(hw.driver, str):
        top = f"CUDA <= {hw.max_cuda}" if hw.max_cuda else "older than every curated CUDA"
        lines.append(f"driver {hw.driver} ({top})")
    elif hw.driver is None:
        lines.append("driver: none")
    return tuple(lines)


def constraint_text(c: Constraint) -> str:
    """The requirement a constraint imposed ("vllm>=0.7.2", "vllm not <0.7.1", "no flash-attn")."""
    if c.kind is ConstraintKind.REQUIRE:
        return f"{c.package}{c.specifier}"
    return f"{c.package} not {c.specifier}" if c.specifier else f"no {c.package}"


def reason_texts(pin: Pin) -> list[str]:
    # One line each: a reason ends a comment of a requirements file, where a line break from an
    # overlay's text would become a requirement of its own.
    return list(dict.fromkeys(one_line(reason_text(r)) for r in pin.reasons))


def reason_text(r: PinReason) -> str:
    if r.kind is PinReasonKind.TARGET:
        extras = f"[{','.join(r.extras)}]" if r.extras else ""
        build = f"+{r.variant}" if r.variant else ""
        if r.variant and not r.specifier:
            return f"target {r.package} {r.variant} build"
        return f"target {r.package}{extras}{r.specifier}{build}" if r.specifier or r.extras else "target"
    if r.kind is PinReasonKind.PARENT:
        extras = f"[{','.join(r.parent_extras)}]" if r.parent_extras else ""
        parent = f"{r.parent} {r.parent_version}{extras}"
        if not r.specifier:
            return f"{parent} requires {r.package}"
        return f"{parent} {'pins' if r.exact else 'requires'} {r.package}{r.specifier}"
    if r.kind is PinReasonKind.TORCH_BUILD:
        text = f"{r.variant} build" + (f" (CUDA {r.cuda})" if r.cuda else "")
        if r.compute_capabilities:
            text += " has " + ", ".join(sm(cc) for cc in r.compute_capabilities)
        if r.driver is not None and r.cuda:
            text += f", runs on driver {r.driver}"
        if not r.default:
            text += "; not the public index's default build"
        if r.parent and r.cuda:
            text += f", for a CPU target too: the kernels of {r.parent} link its CUDA libraries, which the CPU build lacks"
        return text
    if r.kind is PinReasonKind.PUBLISHER_WHEEL:
        return f"a wheel built for torch {r.parent_version} by another publisher, {r.source}"
    if r.kind is PinReasonKind.CUDA_BUILD:
        return f"its {r.variant} build, for torch {r.parent_version}: the default index's is for another CUDA ({r.source})"
    if r.kind is PinReasonKind.TESTED:
        return f"tested with {', '.join(r.tested_with) or f'{r.parent} {r.parent_version}'} in {r.source} ({r.date})"
    if r.kind is PinReasonKind.CONTEMPORARY:
        days = r.days or 0
        count = f"{abs(days)} day{'s' if abs(days) != 1 else ''}"
        when = f"{count} after" if days > 0 else (f"{count} before" if days < 0 else "the same day as")
        return f"released {when} {r.parent} {r.parent_version}"
    if r.kind is PinReasonKind.NEWEST:
        return f"newest allowed; never tested with {r.parent} {r.parent_version}" if r.parent else "newest allowed"
    assert r.constraint is not None
    return f"kept off {r.constraint.signature}: {constraint_text(r.constraint)}"


def note_text(n: LockNote) -> str:
    if n.kind is LockNoteKind.GPUS_UNKNOWN:
        return f"GPUs unknown ({n.reason}): torch builds not checked against the GPU architecture; declare --gpus"
    if n.kind is LockNoteKind.GPU_ARCH_UNKNOWN:
        return f"GPU {n.gpu_index} {n.gpu}: compute capability unknown, not checked"
    if n.kind is LockNoteKind.DRIVER_UNKNOWN:
        return f"driver unknown ({n.reason}): CUDA builds not checked against it; declare --driver"
    if n.kind is LockNoteKind.REQUIREMENTS_UNKNOWN:
        return f"{n.package} {n.version}: its requirements are unknown to the matrix (sdist only); pip resolves them"
    if n.kind is LockNoteKind.HELD_BACK:
        return n.reason or f"{n.package} {n.version} holds torch back"
    if n.kind is LockNoteKind.FROM_SOURCE:
        return (f"{n.reason}: pip builds it from source (nvcc of torch's CUDA major and ninja on the build machine; "
                f"tens of minutes), or install a wheel another publisher built for this torch")
    if n.kind is LockNoteKind.AFTER_TORCH:
        return (f"{n.package} compiles against torch: install it after the rest with "
                f"`pip install --no-build-isolation {n.reason or f'{n.package}=={n.version}'}`")
    return f"known failure {n.signature} still applies ({n.title}): {n.advice or ', '.join(n.requires)}"


# ----------------------------------------------------------------------------- rejections and conflicts


_PER_BUILD = (RejectionKind.NO_ARCH, RejectionKind.NEEDS_DRIVER, RejectionKind.OTHER_CUDA_MAJOR)


def rejection_text(r: Rejection) -> str:
    """Why one release (or build) does not fit, in a line."""
    if r.variant is not None and r.asker is None and r.kind in _PER_BUILD:
        return _build_problem(r)
    return _REJECTION_TEXT.get(r.kind, _no_cuda_major_wheels)(r)


def _needs_driver(r: Rejection) -> str:
    top = f"CUDA <= {r.max_cuda}" if r.max_cuda else "older than every curated CUDA"
    return (f"every torch {r.version} build needs a newer driver than {r.driver} ({top})"
            + (f"; {r.fallback_variant} would run under minor-version compatibility (--minor-compat)"
               if r.fallback_variant else ""))


def _other_cuda_major(r: Rejection) -> str:
    if r.asker is not None:
        return (f"{asker_label(r.asker)} ships kernels for the CUDA major of torch {r.version}'s public-index build; "
                f"the {r.variant} build that fits this hardware has another")
    return f"only torch {r.version} builds of another CUDA major than its public-index build fit"


def _dead_dependency(r: Rejection) -> str:
    text = f"{r.package} {r.version} {'pins' if r.exact else 'requires'} {r.dependency}{r.specifier}"
    if r.because is not None:
        return f"{text}; {rejection_text(r.because)}"
    return f"{text}; no {r.dependency} release in {r.specifier}" if r.specifier else text


def _broken_link(r: Rejection) -> str:
    who = asker_label(r.asker) if r.asker is not None else "the package that asked"
    return f"{who} imports {r.imported} at top level; {r.package} {r.version} does not have it (API index)"


def _no_cuda_major_wheels(r: Rejection) -> str:
    if r.variant is not None:
        built = f" (its wheels for that torch: CUDA {r.supported})" if r.supported else ""
        return f"{r.package} {r.version} has no prebuilt wheel for torch's {r.variant} build{built}"
    return f"{r.package} {r.version} has no wheels for CUDA {r.cuda_major} torch builds"


_REJECTION_TEXT: dict[RejectionKind, Callable[[Rejection], str]] = {
    RejectionKind.TORCH_NOT_CURATED: lambda r: f"torch {r.version} is not in matrix/torch.toml (its CUDA builds are unknown)",
    RejectionKind.NO_PYTHON_WHEELS: lambda r: f"torch {r.version} has no wheels for Python {r.python} ({r.supported})",
    RejectionKind.NO_SUCH_BUILD: lambda r: f"torch {r.version} has no {r.variant} build",
    RejectionKind.UPLOADED_AFTER: lambda r: f"{r.package} {r.version} was uploaded after {r.date} (--exclude-newer)",
    RejectionKind.MISSING_EXTRA: lambda r: f"{r.package} {r.version} has no [{r.extra}] extra",
    RejectionKind.NO_CUDA_BUILD: lambda r: f"torch {r.version} has no CUDA build",
    RejectionKind.NO_ARCH: lambda r: f"no torch {r.version} build has {sm(r.compute_capability or '')} ({r.gpu})",
    RejectionKind.NEEDS_DRIVER: _needs_driver,
    RejectionKind.NO_BUILD_FITS: lambda r: f"no torch {r.version} build fits: " + "; ".join(_build_problem(p) for p in r.problems),
    RejectionKind.OTHER_CUDA_MAJOR: _other_cuda_major,
    RejectionKind.YANKED: lambda r: f"{r.package} {r.version} is yanked" + (f" ({r.yanked_reason})" if r.yanked_reason else ""),
    RejectionKind.REQUIRES_PYTHON: lambda r: f"{r.package} {r.version} requires Python {r.supported}",
    RejectionKind.DEAD_DEPENDENCY: _dead_dependency,
    RejectionKind.BROKEN_LINK: _broken_link,
    RejectionKind.EXTENSION_MIN_ARCH: lambda r: (f"{r.package} needs compute capability >= {r.min_compute_capability}; "
                                                 f"{r.gpu} is {sm(r.compute_capability or '')}"),
    RejectionKind.EXTENSION_NOT_CURATED: lambda r: f"{r.package} {r.version}: its prebuilt wheels are not in matrix/extensions.toml",
    RejectionKind.EXTENSION_NO_PYTHON: lambda r: f"{r.package} {r.version} has no wheels for Python {r.python}",
    RejectionKind.EXTENSION_CUDA_MAJOR: _no_cuda_major_wheels,
}
"""The line for each kind of rejection."""


def _build_problem(r: Rejection) -> str:
    """Why one build of a release does not fit ("cu126 has no sm_120 (RTX 5090)")."""
    if r.kind is RejectionKind.NO_ARCH:
        return f"{r.variant} has no {sm(r.compute_capability or '')} ({r.gpu})"
    if r.kind is RejectionKind.NEEDS_DRIVER:
        return f"{r.variant} needs driver >= {r.min_driver}" if r.min_driver else f"{r.variant} needs a newer driver"
    return f"{r.variant} has another CUDA major than the public-index build"


def asker_label(a: Asker) -> str:
    """A package as the resolver saw it ("trl 1.16.0[vllm]")."""
    extras = f"[{','.join(a.extras)}]" if a.extras else ""
    return (f"{a.package} {a.version}" if a.version else f"{a.package}") + extras


def _ask_text(ask: Ask) -> str:
    extras = f"[{','.join(ask.extras)}]" if ask.extras else ""
    req = f"{ask.package}{extras}{ask.specifier}"
    if ask.asker.kind is AskerKind.CATALOG:
        return f"the catalog ({ask.asker.signature}) requires {req}"
    if ask.asker.kind is AskerKind.PACKAGE:
        return f"{asker_label(ask.asker)} {'pins' if ask.exact else 'requires'} {req}"
    return f"you ask for {req}"


def cause_text(c: ConflictCause) -> str:
    """One cause, as a line a person can act on."""
    if c.kind is ConflictKind.IMPOSED:
        assert c.constraint is not None
        return (f"(to avoid {c.constraint.signature}, the lock also required {constraint_text(c.constraint)}: "
                f"{', '.join(c.constraint.evidence)})")
    if c.kind is ConflictKind.ALWAYS_KNOWN_FAILURE:
        return f"every set that meets the targets hits known failure {c.signature} ({c.title})"
    if c.kind is ConflictKind.TOO_DEEP:
        tried = f"tried {'; then '.join(c.attempts)}; " if c.attempts else ""
        busiest = f"it backtracked most on {', '.join(c.backtracked)}; " if c.backtracked else ""
        those = " (or those packages)" if c.backtracked else ""
        return f"{tried}{busiest}pin one of the targets{those} more tightly, or allow more time with {SEARCH_SECONDS_VARIABLE}"
    parts = _asks_text(c.asks)
    if c.shortfall is Shortfall.CONTRADICTORY:
        parts.append("no release meets all of these at once")
    elif c.shortfall is Shortfall.NO_RELEASE:
        parts.append(f"the matrix has no {c.package} release in {c.specifier}" if c.specifier else f"the matrix has no {c.package} release")
    elif c.shortfall is Shortfall.REJECTED:
        reasons = list(dict.fromkeys(rejection_text(r) for r in c.rejections))
        parts += reasons[:2] + ([f"and {len(reasons) - 2} more"] if len(reasons) > 2 else [])
    if c.upgrades:
        hint = " or ".join(f"use {u.package} >= {u.version}" for u in c.upgrades)
        if c.alternative is Alternative.ANOTHER_GPU:
            hint += " or another GPU"
        elif c.alternative is Alternative.NEWER_DRIVER:
            hint += " or a newer driver"
        parts.append(hint)
    return "; ".join(parts)


def _asks_text(asks: Sequence[Ask]) -> list[str]:
    """One line a requirement; when many releases of one package ask (15 flash-attn releases capping
    torch), the newest two speak and the rest are counted."""
    per: dict[str, int] = {}
    for a in asks:
        if a.asker.kind is AskerKind.PACKAGE and a.asker.package:
            per[a.asker.package] = per.get(a.asker.package, 0) + 1
    out: list[str] = []
    shown: dict[str, int] = {}
    for a in asks:
        pkg = a.asker.package if a.asker.kind is AskerKind.PACKAGE else None
        if pkg is not None and per[pkg] > 3:
            shown[pkg] = shown.get(pkg, 0) + 1
            if shown[pkg] == 3:
                out.append(f"and {per[pkg] - 2} older {pkg} releases, each with its own {a.package} range")
            if shown[pkg] > 2:
                continue
        out.append(_ask_text(a))
    return out


def render_still_applies(lock: Lock) -> str:
    """The known failures the written set still meets, one line each, for the terminal: doctor will report them on
    this lock, and a person who reads only the terminal learns it when the lock is made, not from the gate."""
    return "".join(f"compat: the lock could not keep off this: {note_text(n)}\n" for n in lock.notes
                   if n.kind is LockNoteKind.STILL_MATCHES)


def render_conflict(targets: Sequence[str], error: ResolutionError) -> str:
    """What `compat lock` and `compat plan` print on stderr when no set exists: one cause a line."""
    if error.causes and all(c.kind is ConflictKind.TOO_DEEP for c in error.causes):
        bound = max(c.seconds or 0 for c in error.causes)
        head = (f"compat: the search for a set for {' '.join(targets)} stopped at its bound ({bound:g} s) without an answer; "
                "this is not proof that no set exists:")
    else:
        head = "compat: no compatible set for " + " ".join(targets) + ":"
    lines = [head]
    lines += [f"  - {line}" for line in dict.fromkeys(cause_text(c) for c in error.causes)]
    return "\n".join(lines) + "\n"
