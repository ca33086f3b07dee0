"""The paste-ready report: what GitHub's Markdown makes of it, and its size."""

from __future__ import annotations

import dataclasses
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from compat.matrix import load_matrix
from compat.model.facts import load_facts
from compat.model.findings import Finding, Fix, Severity, Status, observed
from compat.report.markdown import LIMIT, escape, render_markdown
from tests.support.paths import FACTS_300


class _Page(HTMLParser):
    """The rendered HTML as GitHub would show it: tags seen, text, table cells and links."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "td":
            self._cell = []
        if tag == "a":
            self.links.append(dict(attrs)["href"])

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _render(markdown: str) -> _Page:
    page = _Page()
    page.feed(MarkdownIt("gfm-like").render(markdown))
    return page


def test_the_300_package_environment_renders_as_one_collapsible_block(cli):
    code, out = cli("report", "--facts", str(FACTS_300), "--report-url", "https://example.org/compat")
    assert code == 0  # report is for pasting: findings do not fail it
    assert len(out) < LIMIT < 65_536
    assert out.startswith("<details>\n<summary>") and out.rstrip().endswith("</details>")
    page = _render(out)
    assert page.tags[0] == "details" and "summary" in page.tags and "table" in page.tags
    text = "".join(page.text)
    # the two API timeline links are feature-only: info (compat lock accepts such pairs; docs/doctor.md)
    assert "compat doctor: 2 errors, 0 warnings, 0 info · torch 2.5.1+cu124 · 8 × NVIDIA H100" in text
    # the essentials, each in its own cell, with no markup leaking through
    cells = dict(zip(page.cells[::2], page.cells[1::2], strict=True))
    assert cells["Python"].startswith("3.11.9 (cpython) · linux x86_64")
    assert cells["GPUs"] == "8 × NVIDIA H100 80GB HBM3 (sm_90, 80 GiB) · NVLink"
    assert cells["driver"] == "550.54.15 · CUDA <= 12.4"
    assert cells["packages"] == "300 installed"
    assert "trl 0.15.2 · vllm 0.7.2" in cells["stack"]
    # no package list: 300 names would not fit
    assert "zipp" not in out
    # every finding with its fix, and its id linking to its page
    assert "https://example.org/compat/findings/grpo-fsdp-ref-model-on-cpu.html" in page.links
    assert "Fix: requires trl>=0.18.0." in "".join(page.text)
    # the missing dependencies are one finding with one heading (issue 12)
    assert out.count("[`missing-requirement`](https://example.org/compat/findings/missing-requirement.html)") == 1
    assert "#### ✗ error · Required packages are not installed: numpy, nvidia-nccl-cu12, tokenizers" in out


def test_doctor_format_markdown_is_the_same_block(cli):
    _, report = cli("report", "--facts", str(FACTS_300))
    code, doctor = cli("doctor", "--format", "markdown", "--facts", str(FACTS_300))
    assert code == 1 and doctor == report
    assert "](" not in report  # no base URL configured: ids are code, not links


def test_many_findings_stay_under_the_limit():
    facts = load_facts(FACTS_300.read_text())
    sig = load_matrix().signatures
    many = tuple(
        Finding(id=s.id, severity=s.severity, status=Status.FOUND, title=s.title, cause=s.cause, fix=s.fix,
                evidence=(observed("seen " * 20),), refs=s.refs)
        for s in sig
    ) + tuple(
        Finding(id=f"x{i}", severity=Severity.WARNING, status=Status.CANNOT_CHECK, title="t", cause="", fix=Fix(),
                unknown=("u" * 200,))
        for i in range(80)
    )
    out = render_markdown(facts, many, report_url="https://example.org")
    assert len(out) <= LIMIT
    assert "more** (run `compat doctor`" in out
    page = _render(out)
    assert page.tags[0] == "details" and page.tags.count("details") == 1


def test_markup_in_findings_cannot_break_the_block():
    facts = dataclasses.replace(load_facts(FACTS_300.read_text()), packages=())
    f = Finding(id="x", severity=Severity.ERROR, status=Status.FOUND, title="a </details> | b",
                cause="use `torch<2.7` <script>", fix=Fix(advice="x & y"))
    page = _render(render_markdown(facts, (f,)))
    assert "script" not in page.tags and page.tags.count("details") == 1
    text = "".join(page.text)
    assert "a </details> | b" in text and "torch<2.7" in text and "x & y" in text
    assert escape("`a|b` <c>") == "`a\\|b` &lt;c&gt;"


def test_no_findings_says_so():
    facts = load_facts(FACTS_300.read_text())
    out = render_markdown(facts, ())
    assert "no problems found" in out and "No problems found." in out


def test_facts_short_is_the_essentials(cli):
    code, out = cli("facts", "--short", "--facts", str(FACTS_300))
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["Python", "OS", "torch", "driver", "GPUs", "launch", "script", "stack", "packages"]
    assert lines[-1].endswith("300 installed")
    assert len(out) < 1_000


def test_ignored_and_expired_findings_are_listed():
    import datetime

    from compat.model.config import Ignore, Ignored, Waivers

    facts = load_facts(FACTS_300.read_text())
    f = Finding(id="nccl-p2p-hang-pcie", severity=Severity.WARNING, status=Status.FOUND, title="t", cause="c", fix=Fix())
    waivers = Waivers(ignored=(Ignored(finding=f, ignore=Ignore(id=f.id, reason="single <node>", until=datetime.date(2027, 1, 31))),),
                      expired=(Ignore(id="gpu-without-bf16", reason="fp16", until=datetime.date(2020, 1, 1)),))
    out = render_markdown(facts, (), waivers=waivers, strict=True)
    assert "- `nccl-p2p-hang-pcie`: single &lt;node&gt; (until 2027-01-31)" in out
    assert "- `gpu-without-bf16`: expired 2020-01-01 (fp16)" in out
