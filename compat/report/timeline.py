"""Renderers for `compat matrix api` and `compat matrix refresh --api`. Pure: records in, str out."""

from __future__ import annotations

import json

from compat.model.unknown import Unknown
from compat.timeline.records import ApiImports, ApiKind, ApiLookup, ApiMatch, ApiOutcome, Span

SCHEMA_VERSION = 1
"""Version of the `matrix api --json` layout."""
_SHOWN = 8
"""Releases not indexed named in the text output."""

_KIND_WORDS = {
    ApiKind.MODULE: "module",
    ApiKind.NAME: "name",
    ApiKind.PARAM: "parameter",
    ApiKind.CLI: "command",
    ApiKind.MODEL_TYPE: "model type",
    ApiKind.MEMBER: "member",
    ApiKind.BASE: "base",
    ApiKind.SIGNATURE: "signature",
}


def _spans(present: tuple[Span, ...]) -> str:
    return ", ".join(s.first if s.first == s.last else f"{s.first} .. {s.last}" for s in present)


def _range(releases: tuple[str, ...]) -> str:
    return f"{len(releases)} releases indexed ({releases[0]} .. {releases[-1]})" if releases else "no release indexed"


def _match_line(match: ApiMatch) -> str:
    where = _spans(match.present) if match.present else "in no indexed release"
    return f"{match.key}  [{_KIND_WORDS[match.kind]}]: {where}"


def render_api_lookup(found: ApiLookup) -> str:
    lines = [f"{found.package}: {_range(found.releases)}"]
    if found.missing:
        shown = ", ".join(r for r, _ in found.missing[:_SHOWN])
        more = f" and {len(found.missing) - _SHOWN} more (--json lists them with why)" if len(found.missing) > _SHOWN else ""
        lines.append(f"  not indexed: {shown}{more}")
    if found.query is None:
        lines += [f"  {_KIND_WORDS[k]}s: {n}" for k, n in found.counts]
        return "\n".join(lines) + "\n"
    first, *others = found.matches
    lines.append(_match_line(first))
    if found.since is not None:
        lines.append(f"  (members are indexed from {found.since} on: older releases are not read for them)")
    if found.signatures:
        lines.append("call signatures:")
        lines += [f"  ({_signature(m.key)})  {_spans(m.present)}" for m in found.signatures]
    elsewhere = [m for m in others if m.present]
    if elsewhere:
        lines.append("also:")
        lines += [f"  {_match_line(m)}" for m in elsewhere]
    return "\n".join(lines) + "\n"


def _signature(key: str) -> str:
    """"pkg:f[a,b=,*,c]" -> "a, b=, *, c"."""
    return key[key.index("[") + 1:-1].replace(",", ", ")


def _match_json(match: ApiMatch) -> dict:
    return {
        "kind": match.kind.value,
        "name": match.key,
        "present": [{"first": s.first, "last": s.last} for s in match.present],
    }


def render_api_lookup_json(found: ApiLookup) -> str:
    doc: dict = {
        "schema_version": SCHEMA_VERSION,
        "package": found.package,
        "indexed": {"count": len(found.releases), "first": found.releases[0] if found.releases else None,
                    "last": found.releases[-1] if found.releases else None},
        "not_indexed": [{"release": r, "reason": why} for r, why in found.missing],
    }
    if found.query is None:
        doc["keys"] = {k.value: n for k, n in found.counts}
    else:
        first, *others = found.matches
        doc["query"] = found.query
        doc.update(_match_json(first))
        doc["elsewhere"] = [_match_json(m) for m in others if m.present]
        if found.signatures:
            doc["signatures"] = [{"signature": _signature(m.key), "present": _match_json(m)["present"]} for m in found.signatures]
        if found.since is not None:
            doc["indexed_since"] = found.since
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def render_api_imports(found: ApiImports) -> str:
    head = f"{found.package} {found.release} imports from {found.other}"
    if isinstance(found.edges, Unknown):
        return f"{head}: {found.edges}\n"
    if not found.edges:
        return f"{head}: nothing\n"
    lines = [f"{head}:"]
    for e in found.edges:
        what = f"from {e.target} import {e.name}" if e.name else f"import {e.target}"
        lines.append(f"  {e.module}: {what}  ({e.kind.value.replace('_', '-')})")
    return "\n".join(lines) + "\n"


def render_api_imports_json(found: ApiImports) -> str:
    doc: dict = {"schema_version": SCHEMA_VERSION, "package": found.package, "release": found.release, "other": found.other}
    if isinstance(found.edges, Unknown):
        doc["imports"] = None
        doc["unknown"] = found.edges.reason
    else:
        doc["imports"] = [{"module": e.module, "target": e.target, "name": e.name, "kind": e.kind.value} for e in found.edges]
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def render_api_refresh(outcomes: tuple[ApiOutcome, ...], index: str) -> str:
    lines = [f"API index from {index}:"]
    for o in outcomes:
        per = f", {o.seconds / o.added:.1f} s per release" if o.added else ""
        lines.append(
            f"  {o.package}: {o.releases} releases indexed, {o.added} extracted now, {o.missing} not indexed; "
            f"{o.requests} requests in {o.seconds:.1f} s{per}"
        )
    return "\n".join(lines) + "\n"
