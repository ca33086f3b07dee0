"""docs/reference.md names every output format of every command, every built-in check id and every signature id
(generated; kept current here).

After adding, renaming or removing a format, a check or a signature:
`COMPAT_UPDATE_GOLDEN=1 python -m pytest tests/report/test_reference.py --no-cov`.
"""

from __future__ import annotations

from pathlib import Path

from compat.judge.checks import cuda, gpu_features, import_links, launch, requirements, topology
from compat.matrix import load_matrix
from compat.report.formats import FORMATS
from compat.report.markdown import escape
from tests.support.golden import check_golden

ROOT = Path(__file__).resolve().parent.parent.parent
PAGE = ROOT / "docs" / "reference.md"
MODULES = (requirements, cuda, gpu_features, launch, topology, import_links)


def render() -> str:
    matrix = load_matrix()
    by_id = {s.id: s for s in matrix.signatures}
    out = [
        "# Reference: output formats, check ids and signature ids",
        "",
        "Generated from the code and the shipped catalog by `tests/report/test_reference.py`, which fails when",
        "this page is stale. Each id has a page in the site `compat matrix site` builds",
        "(`findings/<id>.html`, see [matrix-site.md](matrix-site.md)); ignore one in the config with",
        "`ignore = [{ id = \"...\", reason = \"...\" }]` (see [config.md](config.md)).",
        "",
        "## Output formats",
        "",
        "`--format NAME` of each command, from the one table in `compat/report/formats.py` (`--json` is `--format json`;",
        "`-o FILE` writes the output to a file). Report formats say what a run found; `compat lock`'s are lock formats,",
        "the file an installer reads (PEP 751 `pylock.toml` is chosen by the name given to `-o`, with `--full`).",
        "",
        "| command | formats (default first) |",
        "|---|---|",
        *(f"| `compat {c}` | {', '.join(f'`{n}`' for n in sorted(o.names, key=lambda n: n != o.default))} |"
          for c, o in FORMATS.items()),
        "",
        "## Built-in checks of `compat doctor`",
        "",
        "Decided from the environment's facts by `compat/judge/checks/`; the words come from the catalog entry of the same id.",
        "",
        "| id | module | severity | title |",
        "|---|---|---|---|",
    ]
    for module in MODULES:
        name = module.__name__.rsplit(".", 1)[1]
        for cid in sorted(module.OWNS):
            sig = by_id.get(cid)
            out.append(f"| `{cid}` | `checks/{name}.py` | {sig.severity.value if sig else ''} | {escape(sig.title) if sig else ''} |")
    out += ["", f"## Signatures ({len(matrix.signatures)})", "",
            "The known-failure catalog (`matrix/signatures/<area>.toml`): `compat explain` matches their patterns in logs;",
            "`compat doctor` reports those whose `when` clause the environment meets (column doctor).", ""]
    for area in sorted({s.area for s in matrix.signatures}):
        out += [f"### {area}", "", "| id | severity | doctor | title |", "|---|---|---|---|"]
        for s in sorted((s for s in matrix.signatures if s.area == area), key=lambda s: s.id):
            doctor = "check" if any(s.id in m.OWNS for m in MODULES) else ("yes" if s.doctor else "no")
            kind = "wrapper" if s.wrapper else s.severity.value
            out.append(f"| `{s.id}` | {kind} | {doctor} | {escape(s.title)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def test_reference_page_is_current_and_complete():
    text = render()
    check_golden(PAGE, text)
    from compat.judge.checks import OWNED_IDS

    for sid in OWNED_IDS | {s.id for s in load_matrix().signatures}:
        assert f"| `{sid}` |" in text, sid
