"""Renderers for `compat lock`: a requirements file, a constraints file, JSON. Pure: Lock in, str out."""

from __future__ import annotations

import enum
import json

from collections.abc import Sequence

from compat.errors import ResolutionError
from compat.model import codec
from compat.model.lock import Lock, Pin


class LockFormat(str, enum.Enum):
    REQUIREMENTS = "requirements"
    CONSTRAINTS = "constraints"
    JSON = "json"


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
    lines += [f"#   {h}" for h in lock.hardware]
    for c in lock.constraints:
        lines.append(f"# kept off known failure {c.signature}: {c.requirement} (it matched {c.why})")
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
            f"# {pin.name}=={pin.version}  # {'; '.join(pin.reasons)}; compiles against torch, so install it "
            f"after the rest: pip install --no-build-isolation {pin.name}=={pin.version}"
        )
    lines += [f"# note: {n}" for n in lock.notes]
    return "\n".join(lines) + "\n"


def _line(pin: Pin, *, extras: bool) -> str:
    name = f"{pin.name}[{','.join(pin.extras)}]" if extras and pin.extras else pin.name
    why = "; ".join(pin.reasons)
    return f"{name}=={pin.full_version}" + (f"  # {why}" if why else "")


def render_conflict(targets: Sequence[str], error: ResolutionError) -> str:
    """Why no set fits `targets` (for standard error): one line per cause."""
    lines = ["compat: no compatible set for " + " ".join(targets) + ":"]
    lines += [f"  - {cause}" for cause in error.causes]
    return "\n".join(lines) + "\n"
