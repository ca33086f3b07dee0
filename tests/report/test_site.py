"""`compat matrix site`: the pages, their size, and what headless Chromium makes of them."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from compat.matrix.tables import build_rows, stack_rows, wheel_rows
from compat.report.site import ref_url, when_lines
from tests.report import log_lines
from tests.support.golden import check_golden
from tests.support.matrix import shipped_matrix

MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from typer.testing import CliRunner

    from compat.cli import app

    out = tmp_path_factory.mktemp("site")
    result = CliRunner().invoke(app, ["matrix", "site", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote {len(MATRIX.signatures) + 4} pages")
    return out


def _chromium(*args: str, url: str, tmp: Path) -> tuple[str, str]:
    assert CHROMIUM is not None
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp / 'profile'}",
         "--enable-logging=stderr", "--v=0", *args, url],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp)},
    )
    return proc.stdout, proc.stderr


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_the_log_lines_shipped_are_current():
    text = log_lines.render(MATRIX)
    check_golden(log_lines.SHIPPED, text)


def test_every_signature_and_check_has_a_page_and_the_site_is_small(site):
    from compat.judge.checks import OWNED_IDS

    for sid in {s.id for s in MATRIX.signatures} | OWNED_IDS:
        assert (site / "findings" / f"{sid}.html").is_file(), sid
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert size < 20 * 1024 * 1024
    page = (site / "findings" / "cuda-driver-too-old.html").read_text()
    assert "The NVIDIA driver on your system is too old (found version 11040)" in page  # the real log line
    assert '<a href="https://github.com/vllm-project/vllm/issues/11623">vllm-project/vllm#11623</a>' in page
    assert "built-in check" in page and "torch_cpu = false" in page
    grpo = (site / "findings" / "grpo-fsdp-ref-model-on-cpu.html").read_text()
    assert "packages = { trl = &quot;&lt;0.18.0,&gt;=0.14.0&quot; }" in grpo


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href") or "")


def test_internal_links_resolve(site):
    for page in site.rglob("*.html"):
        parser = _Links()
        parser.feed(page.read_text())
        for href in parser.hrefs:
            if not href.startswith(("http://", "https://")):
                assert (page.parent / href.split("#")[0]).resolve().is_file(), (page, href)


def test_tables_hold_the_curated_rows():
    rows = {r.vllm: r for r in stack_rows(MATRIX)}
    r = rows["0.7.2"]
    assert (r.torch, r.cuda_default, r.min_driver) == ("2.5.1", "12.4", "550.54.14")
    # trl 0.14.0 takes any vllm, 0.15.x >=0.7.1, 0.15.2 ==0.7.2, 0.16.x >=0.7.0; 0.17.0 wants >=0.8.3
    assert r.trl_spans == (("0.14.0", "0.16.1"),) and "0.17.0" not in r.trl
    assert "12.1" in r.cuda_builds and "11.8" in r.cuda_builds
    builds = {(b.torch, b.variant): b for b in build_rows(MATRIX)}
    assert "12.0" not in builds[("2.5.1", "cu124")].archs and "12.0" in builds[("2.7.0", "cu128")].archs
    flash = [w for w in wheel_rows(MATRIX) if w.package == "flash-attn"]
    assert flash and all(w.min_compute_capability == "8.0" for w in flash)


def test_conditions_and_refs_read_as_written():
    sig = MATRIX.signature("gpu-arch-not-in-torch-build")
    assert sig is not None
    assert when_lines(sig.when) == ['packages = { torch = "<2.7" }', 'compute_capability = ">=10.0"']
    assert ref_url("pytorch/pytorch#150733") == "https://github.com/pytorch/pytorch/issues/150733"
    assert ref_url("Dao-AILab/flash-attention@v2.8.3") == "https://github.com/Dao-AILab/flash-attention/tree/v2.8.3"
    assert ref_url("pypi:torch==2.5.1") is None


@needs_chromium
def test_chromium_shows_the_trl_vllm_table_and_filters_it(site, tmp_path):
    dom, stderr = _chromium("--dump-dom", url=(site / "stack.html").as_uri() + "#0.7.2", tmp=tmp_path)
    assert _console(stderr) == []
    assert "<h1 id=\"stack\">TRL × vLLM × torch × CUDA</h1>" in dom
    rows = re.findall(r"<tr data-row=\"\"( style=\"display: none;\")?>(.*?)</tr>", dom)
    assert len(rows) == len(stack_rows(MATRIX))
    shown = [cells for hidden, cells in rows if not hidden]
    assert shown and all("0.7.2" in cells for cells in shown)  # the search ran in the page, without a server
    assert any(cells.startswith("<td>0.7.2</td><td>2.5.1</td>") for cells in shown)


@needs_chromium
def test_chromium_opens_every_kind_of_page_without_console_errors(site, tmp_path):
    # every page shares the same script; stack.html is opened by the test above
    for page in ("index.html", "findings/cuda-driver-too-old.html"):
        dom, stderr = _chromium("--dump-dom", url=(site / page).as_uri(), tmp=tmp_path)
        assert _console(stderr) == [], page
        assert "</main>" in dom
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>throw new Error('boom')</script></body></html>")
    _, stderr = _chromium("--dump-dom", url=bad.as_uri(), tmp=tmp_path)
    assert any("boom" in line for line in _console(stderr))  # the check above can fail


@needs_chromium
def test_chromium_screenshot_is_a_drawn_page(site, tmp_path):
    shot = tmp_path / "stack.png"
    _chromium(f"--screenshot={shot}", "--window-size=1280,900", "--hide-scrollbars",
              url=(site / "stack.html").as_uri(), tmp=tmp_path)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 900)
    pixels = zlib.decompress(b"".join(_chunks(data, b"IDAT")))
    assert len(set(pixels)) > 50  # text, table borders and the header bar, not a blank page


def _chunks(data: bytes, kind: bytes):
    i = 8
    while i < len(data):
        length = struct.unpack(">I", data[i:i + 4])[0]
        if data[i + 4:i + 8] == kind:
            yield data[i + 8:i + 8 + length]
        i += 12 + length


def test_rebuilding_removes_pages_of_gone_ids_and_keeps_other_files(tmp_path):
    from typer.testing import CliRunner

    from compat.cli import app

    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / "renamed-long-ago.html").write_text("old")
    (tmp_path / "CNAME").write_text("compat.example.org\n")
    assert CliRunner().invoke(app, ["matrix", "site", str(tmp_path)]).exit_code == 0
    assert not (tmp_path / "findings" / "renamed-long-ago.html").exists()
    assert (tmp_path / "CNAME").read_text() == "compat.example.org\n"
    blocked = tmp_path / "file"
    blocked.write_text("")
    result = CliRunner().invoke(app, ["matrix", "site", str(blocked / "site")])
    assert result.exit_code != 0 and "cannot write the site to" in str(result.exception)
