"""`compat matrix site DIR`: the shipped matrix as static HTML pages. Pure: records in, {path: html} out.

Every page stands alone (inline CSS and JavaScript, no server, no network): the index with the
search box and every finding id, three compatibility tables, and one page per signature and per
built-in check at `findings/<id>.html` (compat.report.links), where reports link finding ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from html import escape

from packaging.version import Version

from compat import __version__
from compat.matrix.signatures import Signature
from compat.matrix.tables import BuildRow, StackRow, WheelRow
from compat.matrix.torch import cc_key, sm
from compat.matrix.when import ScriptWhen, When
from compat.report.links import finding_path


@dataclass(frozen=True, kw_only=True)
class SiteInput:
    """Everything the site shows, read off the matrix by the API."""

    stack: tuple[StackRow, ...]
    """TRL × vLLM × torch × CUDA rows."""
    builds: tuple[BuildRow, ...]
    """torch builds × GPU architectures."""
    wheels: tuple[WheelRow, ...]
    """Prebuilt extension wheels × torch."""
    signatures: tuple[Signature, ...]
    """The known-failure catalog."""
    checks: frozenset[str]
    """Ids decided by a built-in check of doctor (each also has a catalog entry, or a page of its own)."""
    log_lines: dict[str, str]
    """Signature id → a real log line it matches."""


_CSS = """
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1f2328;background:#fff}
header{background:#24292f;color:#fff;padding:.6em 1.2em}header a{color:#fff;margin-right:1.2em}
main{padding:1em 1.2em;max-width:1400px}h1{font-size:1.5em}code,pre{font-family:ui-monospace,monospace;font-size:.9em}
pre{background:#f6f8fa;padding:.8em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0}td.y{background:#dafbe1;text-align:center}td.p{background:#fff8c5;text-align:center}
.error{color:#cf222e}.warning{color:#9a6700}.info{color:#0969da}input[type=search]{font-size:1em;padding:.3em;width:24em;margin:.5em 0}
.muted{color:#656d76}.tag{border:1px solid #d0d7de;border-radius:1em;padding:0 .5em;font-size:.85em}
"""

_JS = """
(function(){var q=document.getElementById('q');if(!q)return;
function run(){var t=q.value.toLowerCase().trim().split(/\\s+/).filter(Boolean);var shown=0;
document.querySelectorAll('[data-row]').forEach(function(r){var s=r.textContent.toLowerCase();
var ok=t.every(function(w){return s.indexOf(w)>=0;});r.style.display=ok?'':'none';if(ok)shown++;});
var c=document.getElementById('count');if(c)c.textContent=shown+' shown';}
q.addEventListener('input',run);var h=decodeURIComponent(location.hash.slice(1));if(h){q.value=h;}run();})();
"""


def render_site(data: SiteInput) -> dict[str, str]:
    """Relative path → page text, for every page of the site."""
    pages = {
        "index.html": _index(data),
        "stack.html": _stack(data.stack),
        "torch-builds.html": _builds(data.builds),
        "extensions.html": _wheels(data.wheels),
    }
    known = {s.id for s in data.signatures}
    for sig in data.signatures:
        pages[finding_path(sig.id)] = _signature(sig, built_in=sig.id in data.checks, line=data.log_lines.get(sig.id))
    for cid in sorted(data.checks - known):
        pages[finding_path(cid)] = _page(cid, f"<h1><code>{escape(cid)}</code></h1><p>A built-in check of "
                                              "<code>compat doctor</code>.</p>", depth=1)
    return pages


def _page(title: str, body: str, *, depth: int = 0, search: str = "") -> str:
    up = "../" * depth
    box = (f'<input type="search" id="q" placeholder="{escape(search)}" autofocus> <span id="count" class="muted"></span>'
           if search else "")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>{escape(title)} · compat matrix</title><style>{_CSS}</style></head><body>"
        f"<header><a href=\"{up}index.html\"><b>compat matrix</b></a><a href=\"{up}stack.html\">TRL × vLLM × torch × CUDA</a>"
        f"<a href=\"{up}torch-builds.html\">torch builds × GPUs</a><a href=\"{up}extensions.html\">flash-attn × torch</a></header>"
        f"<main>{box}{body}<p class=\"muted\">Built by compat {escape(__version__)} from its shipped matrix.</p></main>"
        f"<script>{_JS}</script></body></html>\n"
    )


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """A table whose rows the search box filters; cells are escaped unless `raw` (pre-built HTML)."""
    cell = (lambda c: c) if raw else escape
    out = ["<table><thead><tr>", *(f"<th>{escape(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr data-row>" + "".join(c if c.startswith("<td") else f"<td>{cell(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _index(data: SiteInput) -> str:
    rows = []
    for s in sorted(data.signatures, key=lambda s: s.id):
        kind = "check + signature" if s.id in data.checks else "signature"
        rows.append((f'<td><a href="{finding_path(s.id)}"><code>{escape(s.id)}</code></a></td>',
                     f'<td class="{s.severity.value}">{s.severity.value}</td>', escape(s.area), escape(kind), escape(s.title)))
    for cid in sorted(data.checks - {s.id for s in data.signatures}):
        rows.append((f'<td><a href="{finding_path(cid)}"><code>{escape(cid)}</code></a></td>', "", "", "check", ""))
    body = (
        "<h1>Which versions work together, and what fails when they do not</h1>"
        "<p>Tables: <a href=\"stack.html\">TRL × vLLM × torch × CUDA with the minimum driver</a> · "
        "<a href=\"torch-builds.html\">torch builds × GPU architectures</a> · "
        "<a href=\"extensions.html\">flash-attn wheels × torch</a>.</p>"
        f"<h2 id=\"findings\">Known failures and checks ({len(rows)})</h2>"
        "<p class=\"muted\">Every id <code>compat doctor</code> and <code>compat explain</code> report. Type to filter.</p>"
        + _table(("id", "severity", "area", "kind", "title"), rows, raw=True)
    )
    return _page("Known failures", body, search="Filter: an id, a package, an error message…")


def _stack(rows: tuple[StackRow, ...]) -> str:
    body = (
        "<h1 id=\"stack\">TRL × vLLM × torch × CUDA</h1>"
        "<p>Each vLLM release, the torch its wheels pin, the CUDA builds of that torch on PyTorch's index and the oldest "
        "NVIDIA driver for the default build, and the TRL releases whose <code>trl[vllm]</code> extra accepts it.</p>"
        + _table(
            ("vLLM", "torch (pinned)", "default CUDA", "CUDA builds", "min driver", "min driver (minor compat)", "TRL [vllm]"),
            ((r.vllm, r.torch or "—", r.cuda_default or "—", " ".join(r.cuda_builds) or "—", r.min_driver or "—",
              r.min_driver_compat or "—", ", ".join(a if a == b else f"{a} \u2013 {b}" for a, b in r.trl_spans) or "none")
             for r in rows),
        )
    )
    return _page("TRL × vLLM × torch × CUDA", body, search="Filter: 0.7.2, 2.5.1, 12.4, 550…")


def _builds(rows: tuple[BuildRow, ...]) -> str:
    archs = sorted({a for r in rows for a in r.archs}, key=cc_key)
    head = ("torch", "build", "default", "min driver", *(sm(a) for a in archs))

    def cells(r: BuildRow) -> list[str]:
        top = max(r.archs, key=cc_key) if r.archs else None
        marks = [('<td class="p">✓+PTX</td>' if a == top and r.ptx else '<td class="y">✓</td>') if a in r.archs else "<td></td>"
                 for a in archs]
        return [escape(r.torch), escape(r.variant), "default" if r.default else "", escape(r.min_driver or "—"), *marks]

    body = (
        "<h1>torch builds × GPU architectures</h1>"
        "<p>The compute capabilities each official Linux x86_64 build ships kernels for (✓), and PTX a newer GPU can JIT "
        "(✓+PTX). A GPU missing from its build fails with <code>no kernel image is available</code>.</p>"
        + _table(head, (cells(r) for r in rows), raw=True)
    )
    return _page("torch builds × GPU architectures", body, search="Filter: 2.7.1, cu128…")


def _wheels(rows: tuple[WheelRow, ...]) -> str:
    minors = sorted({t for r in rows for t in r.torch_minors}, key=Version)
    head = ("package", "versions", "torch", *minors, "Python", "CUDA", "min GPU", "source")

    def cells(r: WheelRow) -> list[str]:
        marks = ['<td class="y">✓</td>' if t in r.torch_minors else "<td></td>" for t in minors]
        return [escape(r.package), escape(", ".join(r.versions)), escape(r.torch), *marks, escape(r.python),
                escape(", ".join(f"{c}.x" for c in r.cuda_majors)),
                escape(sm(r.min_compute_capability) if r.min_compute_capability else "any"), _refs_html([r.source])]

    body = (
        "<h1>Prebuilt extension wheels × torch</h1>"
        "<p>Which torch minors the prebuilt wheels of compiled extensions (flash-attn) cover; elsewhere pip builds from "
        "source, which needs nvcc and often fails.</p>"
        + _table(head, (cells(r) for r in rows), raw=True)
    )
    return _page("flash-attn wheels × torch", body, search="Filter: 2.7.3, 2.5…")


_GITHUB = re.compile(r"^([\w.-]+/[\w.-]+)#(\d+)$")
_COMMIT = re.compile(r"^([\w.-]+/[\w.-]+)@([\w.+-]+)$")


def ref_url(ref: str) -> str | None:
    """Where a catalog reference points: owner/repo#N, owner/repo@tag, or a URL; None for other text."""
    if ref.startswith(("https://", "http://")):
        return ref
    m = _GITHUB.match(ref)
    if m:
        return f"https://github.com/{m[1]}/issues/{m[2]}"
    m = _COMMIT.match(ref)
    if m:
        return f"https://github.com/{m[1]}/tree/{m[2]}"
    return None


def _refs_html(refs: Iterable[str]) -> str:
    out = []
    for ref in refs:
        url = ref_url(ref)
        out.append(f'<a href="{escape(url)}">{escape(ref)}</a>' if url else escape(ref))
    return "<td>" + ", ".join(out) + "</td>"


def when_lines(when: When) -> list[str]:
    """A `when` clause as `key = value` lines, as written in the catalog."""
    lines = []
    empty = When()
    for f in fields(when):
        value = getattr(when, f.name)
        if value == getattr(empty, f.name):
            continue
        if isinstance(value, ScriptWhen):
            lines += [f"script.{line}" for line in when_lines_script(value)]
            continue
        lines.append(f"{f.name} = {_value(value)}")
    return lines


def when_lines_script(script: ScriptWhen) -> list[str]:
    out = []
    empty = ScriptWhen()
    for f in fields(script):
        value = getattr(script, f.name)
        if value != getattr(empty, f.name):
            out.append(f"{f.name} = {_value(value)}")
    return out


def _value(value: object) -> str:
    if isinstance(value, (frozenset, set)):
        return json.dumps(sorted(str(getattr(v, "value", v)) for v in value))
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return "{ " + ", ".join(f"{k} = {json.dumps(str(v))}" for k, v in value) + " }"
        return json.dumps([str(v) for v in value])
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(str(value))


def _signature(sig: Signature, *, built_in: bool, line: str | None) -> str:
    conditions = when_lines(sig.when)
    parts = [
        f"<h1><code>{escape(sig.id)}</code></h1>",
        f"<p><span class=\"tag {sig.severity.value}\">{sig.severity.value}</span> <span class=\"tag\">{escape(sig.area)}</span>"
        + (' <span class="tag">built-in check</span>' if built_in else "") + "</p>",
        f"<h2>{escape(sig.title)}</h2>",
        "<h3>Cause</h3>", f"<p>{escape(sig.cause)}</p>",
        "<h3>Fix</h3>",
    ]
    if sig.fix.requires:
        parts.append("<p>Requires: " + ", ".join(f"<code>{escape(r)}</code>" for r in sig.fix.requires) + "</p>")
    if sig.fix.advice:
        parts.append(f"<p>{escape(sig.fix.advice)}</p>")
    parts.append("<h3>Conditions</h3>")
    if built_in:
        parts.append("<p><code>compat doctor</code> decides this from the environment's facts with a built-in check.</p>")
    if conditions:
        parts.append("<p>An environment is exposed when all of these hold (<code>when</code>):</p>")
        parts.append("<pre>" + escape("\n".join(conditions)) + "</pre>")
    elif not built_in:
        parts.append("<p>None: only <code>compat explain</code> reports it, from a log.</p>")
    if not sig.doctor and not built_in:
        parts.append("<p class=\"muted\">Too broad to warn about before a run: doctor does not report it.</p>")
    parts.append("<h3>A real log line</h3>")
    parts.append(f"<pre class=\"log\">{escape(line)}</pre>" if line else "<p class=\"muted\">A failure that prints nothing "
                 "recognisable (a hang); see the conditions.</p>")
    if sig.patterns:
        parts.append("<h3>Log patterns</h3><pre>" + escape("\n".join(sig.patterns)) + "</pre>")
    if sig.refs:
        parts.append("<h3>References</h3><ul>" + "".join(
            f"<li>{_refs_html([r])[4:-5]}</li>" for r in sig.refs) + "</ul>")
    return _page(sig.id, "".join(parts), depth=1)
