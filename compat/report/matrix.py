"""Renderers for `compat matrix show|validate|refresh`. Pure: records in, str out."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from compat.matrix.releases import PackageReleases, Release, release_requires_text
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from compat.model.curation import Refreshed, Validation

SCHEMA_VERSION = 1
"""Version of the `matrix show --json` layout."""

# Per package, the dependencies worth a column in `show` (package, extra that brings it or None).
_COLUMNS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "vllm": (("torch", None), ("transformers", None)),
    "trl": (("vllm", "vllm"), ("transformers", None), ("accelerate", None)),
    "torch": (("triton", None),),
    "torchvision": (("torch", None),),
    "torchaudio": (("torch", None),),
    "xformers": (("torch", None),),
    "flashinfer-python": (("torch", None),),
    "accelerate": (("torch", None),),
    "peft": (("torch", None), ("transformers", None), ("accelerate", None)),
    "transformers": (("torch", "torch"), ("accelerate", "torch")),
    "liger-kernel": (("torch", None), ("triton", None)),
    "bitsandbytes": (("torch", None),),
    "datasets": (),
    "deepspeed": (("torch", None),),
    "flash-attn": (("torch", None),),
    "triton": (),
}


def _via_extra(req: Requirement, extra: str | None) -> bool:
    text = str(req.marker) if req.marker else ""
    has_extra = "extra ==" in text
    if extra is None:
        return not has_extra
    return f'extra == "{extra}"' in text


def _cell(release: Release, dep: str, extra: str | None) -> str:
    if release.requires is None:
        return "?"
    parts = []
    for req in release.requires_of(dep):
        if not _via_extra(req, extra):
            continue
        text = str(req.specifier) or "any"
        others = [m for m in (str(req.marker).split(" and ") if req.marker else []) if "extra ==" not in m]
        parts.append(text + (" *" if others else ""))
    return " | ".join(dict.fromkeys(parts)) or "-"


TABLE_WIDTH = 160
"""Columns of the release table in a file or a pipe: the requirement columns are wide."""


def render_releases_table(package: PackageReleases, *, since: str | None = None, width: int = TABLE_WIDTH) -> str:
    """A rich table of a package's releases, newest first, laid out in `width` columns (pure: returns the text)."""
    import io

    from packaging.version import Version
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table as RichTable
    from rich.text import Text

    columns = _COLUMNS.get(package.package, ())
    floor = Version(since) if since else None
    rows = []
    for r in reversed(package.releases):
        if floor is not None and r.version < floor:
            continue
        note = []
        if r.yanked:
            note.append("yanked" + (f": {r.yanked_reason}" if r.yanked_reason else ""))
        if r.requires_unknown is not None:
            note.append(f"requirements unknown ({r.requires_unknown.reason})")
        rows.append((
            str(r.version),
            str(r.uploaded) if not isinstance(r.uploaded, Unknown) else "?",
            *(_cell(r, dep, extra) for dep, extra in columns),
            str(r.requires_python) if r.requires_python is not None else "any",
            "; ".join(note),
        ))
    notes = any(row[-1] for row in rows)
    table = RichTable(title=f"{package.package}: {len(package.releases)} releases", show_lines=False)
    # Short cells stay whole; in a narrow terminal a range folds onto more lines rather than being
    # cut short with "…", which would state a different range.
    table.add_column("version", no_wrap=True)
    table.add_column("uploaded", no_wrap=True)
    for dep, extra in columns:
        table.add_column(escape(f"{dep} [{extra}]" if extra and dep != extra else (f"[{dep}]" if extra else dep)), overflow="fold")
    table.add_column("python", overflow="fold")
    if notes:
        table.add_column("note", overflow="fold")
    for row in rows:
        # Cells are data: plain text, never rich markup (a "[...]" in a range or note would vanish).
        table.add_row(*(Text(str(cell)) for cell in (row if notes else row[:-1])))
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False, color_system=None).print(table)
    # rich centres the title with blanks on both sides; trailing blanks are noise in pipes and diffs.
    text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"
    return text + "* = only under an environment marker (see --json)\n"


def render_releases_json(package: PackageReleases) -> str:
    """`show --json`: schema_version, sorted keys, releases oldest first."""
    releases = []
    for r in package.releases:
        item: dict[str, object] = {
            "version": str(r.version),
            "uploaded": None if isinstance(r.uploaded, Unknown) else r.uploaded,
            "yanked": r.yanked,
            "requires_python": str(r.requires_python) if r.requires_python is not None else None,
            "requires": release_requires_text(r),
            "extras": list(r.extras),
        }
        if r.yanked_reason:
            item["yanked_reason"] = r.yanked_reason
        if r.requires_unknown is not None:
            item["requires_unknown"] = r.requires_unknown.reason
        releases.append(item)
    doc = {"schema_version": SCHEMA_VERSION, "package": package.package, "releases": releases}
    return json.dumps(doc, sort_keys=True, indent=2) + "\n"


def render_validation_problems(result: Validation) -> str:
    """Each problem on its own line, then the count (for standard error); "" when there is none."""
    if result.ok:
        return ""
    lines = [f"compat: error: {line}" for line in result.problems]
    lines.append(f"{len(result.problems)} problem(s) in {', '.join(map(str, result.roots))}")
    return "\n".join(lines) + "\n"


def render_validation_ok(result: Validation) -> str:
    return (
        f"matrix OK: {result.packages} packages, {result.releases} releases, {result.signatures} signatures"
        f" ({', '.join(map(str, result.roots))})\n"
    )


def render_refresh(refreshed: Refreshed) -> str:
    """One line per package, then the request count."""
    lines = []
    for o in refreshed.result.outcomes:
        state = "updated" if o.changed else "unchanged"
        unknown = f", {o.unknown} without readable requirements" if o.unknown else ""
        lines.append(f"{o.package}: {o.releases} releases, {o.fetched} metadata fetched{unknown}: {state}")
    lines.append(f"{refreshed.result.requests} requests to {refreshed.index}")
    return "\n".join(lines) + "\n"
