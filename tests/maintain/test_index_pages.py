"""The package index pages (PEP 503 HTML, PEP 691 JSON) parsed without a network: odd and broken entries."""

from __future__ import annotations

import pytest

from compat.maintain.index import parse_simple_html, parse_simple_json, redact

BASE = "https://pypi.example/simple/vllm/"

HTML = """<!DOCTYPE html><html><body>
<a href="../../files/vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl#sha256=aa11" data-requires-python="&gt;=3.9"
   data-core-metadata="sha256=bb22">vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl</a>
<a href="../../files/vllm-0.7.0.tar.gz" data-yanked="">vllm-0.7.0.tar.gz</a>
<a href="../../files/vllm-0.6.0.tar.gz" data-yanked="broken build" data-dist-info-metadata="true">vllm-0.6.0.tar.gz</a>
<a href="../../files/vllm-0.1.0.egg">vllm-0.1.0.egg</a>
<a href="../../files/vllm_flash_attn-2.6.1-cp311-cp311-linux_x86_64.whl">vllm_flash_attn-2.6.1-cp311-cp311-linux_x86_64.whl</a>
<a href="../../files/vllm-0.5.0-1-py3-none-any.whl" data-core-metadata="md5=cc33">vllm-0.5.0-1-py3-none-any.whl</a>
<a>no link</a>
</body></html>"""


def test_html_page_keeps_this_projects_wheels_and_sdists():
    files = {f.filename: f for f in parse_simple_html(HTML, base_url=BASE, project="vllm")}
    assert sorted(files) == [
        "vllm-0.5.0-1-py3-none-any.whl",
        "vllm-0.6.0.tar.gz",
        "vllm-0.7.0.tar.gz",
        "vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl",
    ]
    wheel = files["vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl"]
    assert wheel.url == "https://pypi.example/files/vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl"
    assert (wheel.sha256, wheel.metadata_sha256, wheel.core_metadata) == ("aa11", "bb22", True)
    assert (wheel.requires_python, wheel.wheel, wheel.yanked) == (">=3.9", True, False)
    assert "cp38-abi3-manylinux1_x86_64" in wheel.tags
    assert (files["vllm-0.7.0.tar.gz"].yanked, files["vllm-0.7.0.tar.gz"].yanked_reason) == (True, None)
    old = files["vllm-0.6.0.tar.gz"]
    assert (old.yanked, old.yanked_reason, old.core_metadata, old.wheel) == (True, "broken build", True, False)
    build = files["vllm-0.5.0-1-py3-none-any.whl"]
    assert (build.build, build.core_metadata, build.metadata_sha256) == (1, True, None)


def test_json_page_with_metadata_as_a_hash_table():
    page = {"files": [
        {"filename": "vllm-0.7.2.tar.gz", "url": "../../files/vllm-0.7.2.tar.gz", "hashes": {"sha256": "dd44"},
         "core-metadata": {"sha256": "ee55"}, "yanked": "bad", "upload-time": "2025-02-06T19:00:00Z"},
        {"filename": "vllm-0.7.1.tar.gz", "url": "../../files/vllm-0.7.1.tar.gz", "hashes": None,
         "dist-info-metadata": "false"},
    ]}
    new, old = parse_simple_json(page, base_url=BASE, project="vllm")
    assert (new.sha256, new.metadata_sha256, new.core_metadata, new.yanked_reason) == ("dd44", "ee55", True, "bad")
    assert new.upload_time == "2025-02-06T19:00:00Z"
    assert (old.sha256, old.core_metadata) == (None, False)


@pytest.mark.parametrize(
    ("page", "message"),
    [({}, "no 'files' list"), ({"files": {}}, "no 'files' list"), ({"files": [{"url": "x"}]}, "a file entry without a filename"),
     ([], "no 'files' list")],
)
def test_json_page_without_files(page, message):
    with pytest.raises(ValueError, match=message):
        parse_simple_json(page, base_url=BASE, project="vllm")


def test_redact_keeps_host_and_port_but_not_credentials():
    assert redact("https://user:tok@mirror.example:8443/simple/") == "https://***@mirror.example:8443/simple/"
    assert redact("https://mirror.example/simple/") == "https://mirror.example/simple/"
