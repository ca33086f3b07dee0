"""`compat matrix refresh` against a real HTTP index on 127.0.0.1 (recorded pages, real metadata)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import PackageIndexError
from compat.maintain.index import IndexClient, parse_simple_html, redact
from compat.maintain.refresh import refresh
from compat.matrix._toml import read_toml
from compat.matrix.releases import parse_releases_file
from compat.model.unknown import Unknown
from compat.sources.http import HttpClient
from compat.sources.settings import read_settings

from .conftest import DATA, PROJECTS, Fault

ALL = list(PROJECTS)


def run(fake_index, out: Path, cache: Path | None, packages=ALL, **client_kw) -> tuple:
    client = IndexClient(fake_index.url, http=HttpClient(**{"timeout": 5.0, "backoff": 0.01, **client_kw}))
    result = refresh(packages, out_dir=out, client=client, cache_dir=cache, workers=4)
    return result, client


def load(out: Path, name: str):
    return parse_releases_file(read_toml(out / f"{name}.toml"), expected=name)


def snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture
def out(tmp_path: Path) -> Path:
    d = tmp_path / "releases"
    d.mkdir()
    return d


def test_recorded_html_page_parses_upload_times_yanks_and_requires_python():
    text = (DATA / "simple" / "deepspeed.html").read_text()
    files = parse_simple_html(text, base_url="http://127.0.0.1/simple/deepspeed/", project="deepspeed")
    by_version = {str(f.version): f for f in files}
    assert by_version["0.3.11"].yanked
    assert by_version["0.3.11"].yanked_reason.startswith("Discovered bug with adam(w)")
    assert not by_version["0.3.10"].yanked
    assert all(f.url.startswith("http://127.0.0.1/files/") for f in files)
    assert all(f.upload_time for f in files)


def test_refresh_reads_wheel_metadata_with_range_requests(fake_index, out, tmp_path):
    result, client = run(fake_index, out, tmp_path / "cache")
    vllm = load(out, "vllm")
    trl = load(out, "trl")
    torch = load(out, "torch")
    v072 = vllm.find("0.7.2")
    assert [str(r) for r in v072.requires_of("torch")] == ["torch==2.5.1"]
    assert str(v072.requires_python) == ">=3.9"
    assert v072.uploaded == "2025-02-06"
    assert [str(r.specifier) for r in vllm.find("0.33.0").requires_of("transformers")] == ["<5.21.0,>=5.16.1"]
    (vllm_req,) = [r for r in trl.find("0.15.2").requires_of("vllm") if 'extra == "vllm"' in str(r.marker)]
    assert str(vllm_req) == 'vllm==0.7.2; sys_platform != "win32" and extra == "vllm"'  # as the wheel declares it
    assert vllm_req.marker.evaluate({"extra": "vllm", "sys_platform": "linux"})
    assert not vllm_req.marker.evaluate({"extra": "", "sys_platform": "linux"})
    assert vllm.find("0.1.0").requires is None  # sdist only: never downloaded
    assert vllm.find("0.1.0").requires_unknown == Unknown(reason="sdist-only")
    assert trl.find("1.0.0rc1") is None and [str(r.version) for r in trl.releases] == ["0.15.2"]
    # the Linux x86_64 wheel is the one read: its triton requirement exists only there
    assert any(r.name == "triton" for r in torch.find("2.5.1").requires)
    deepspeed = load(out, "deepspeed")
    assert deepspeed.find("0.3.11").yanked and "adam(w)" in deepspeed.find("0.3.11").yanked_reason
    # 4 wheels were read by ranges, no whole wheel and no sdist was downloaded
    assert client.metadata_fetched == 4
    assert fake_index.count(".tar.gz") == 0
    assert all("Range" in line or "bytes=" in line for line in fake_index.log if ".whl" in line)
    assert {o.package: o.fetched for o in result.outcomes} == {"deepspeed": 0, "torch": 1, "trl": 1, "vllm": 2}


def test_json_pages_and_pep658_metadata_give_the_same_bytes(fake_index, out, tmp_path):
    run(fake_index, out, None)
    html_bytes = snapshot(out)
    fake_index.json_pages = True
    fake_index.pep658 = True
    fake_index.log.clear()
    other = tmp_path / "other"
    other.mkdir()
    run(fake_index, other, None)
    assert snapshot(other) == html_bytes
    assert fake_index.count(".metadata") == 4  # PEP 658 used, no range reads
    assert fake_index.count("bytes=") == 0


def test_second_refresh_with_nothing_new_fetches_no_metadata_and_changes_nothing(fake_index, out, tmp_path):
    run(fake_index, out, tmp_path / "cache")
    before = snapshot(out)
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    fake_index.log.clear()
    result, client = run(fake_index, out, tmp_path / "cache")
    assert client.metadata_fetched == 0
    assert fake_index.count("/files/") == 0
    assert not any(o.changed for o in result.outcomes)
    assert snapshot(out) == before
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes


def test_500s_then_success_are_retried(fake_index, out):
    fake_index.faults.append(Fault("/simple/vllm/", "500", 2))
    fake_index.faults.append(Fault("vllm-0.7.2", "500", 1))
    _result, _client = run(fake_index, out, None)
    assert load(out, "vllm").find("0.7.2").requires_of("torch")
    assert fake_index.count("/simple/vllm/") == 3


def test_slow_response_times_out_and_is_retried(fake_index, out):
    fake_index.slow_s = 1.0
    fake_index.faults.append(Fault("/simple/trl/", "slow", 1))
    run(fake_index, out, None, packages=["trl"], timeout=0.3)
    assert load(out, "trl").find("0.15.2") is not None
    assert fake_index.count("/simple/trl/") == 2


def test_truncated_body_is_retried(fake_index, out):
    fake_index.faults.append(Fault("/simple/trl/", "truncate", 1))
    fake_index.faults.append(Fault("trl-0.15.2-py3-none-any.whl", "truncate", 1))
    run(fake_index, out, None, packages=["trl"])
    assert load(out, "trl").find("0.15.2").requires_of("vllm")
    assert fake_index.count("/simple/trl/") == 2


def test_server_failing_mid_run_leaves_the_matrix_byte_identical(fake_index, out, tmp_path):
    run(fake_index, out, None)
    # an older matrix: what a refresh that dies must leave alone
    (out / "vllm.toml").write_bytes((out / "vllm.toml").read_bytes().replace(b"2025-02-06", b"2025-02-07"))
    before = snapshot(out)
    fake_index.faults.append(Fault("vllm-0.33.0", "500", 1000))
    with pytest.raises(PackageIndexError, match="HTTP 500"):
        run(fake_index, out, None, retries=2)
    assert snapshot(out) == before  # no half-written file, no temporary file left behind


def test_interrupt_after_some_fetches_leaves_the_matrix_byte_identical(fake_index, out, monkeypatch):
    run(fake_index, out, None)
    (out / "trl.toml").write_bytes(b"# an older file\n" + (out / "trl.toml").read_bytes())
    before = snapshot(out)
    calls = []
    real = IndexClient.core_metadata

    def dies(self, file):
        calls.append(file.filename)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return real(self, file)

    monkeypatch.setattr(IndexClient, "core_metadata", dies)
    with pytest.raises(KeyboardInterrupt):
        run(fake_index, out, None)
    assert len(calls) >= 3
    assert snapshot(out) == before


def test_a_file_that_does_not_parse_back_is_never_written(fake_index, out, monkeypatch):
    run(fake_index, out, None)
    before = snapshot(out)
    import compat.maintain.refresh as refresh_mod

    monkeypatch.setattr(refresh_mod, "emit_releases", lambda package, header="": "package = [broken\n")
    with pytest.raises(PackageIndexError, match="refusing to write"):
        run(fake_index, out, None)
    assert snapshot(out) == before


def test_metadata_hash_mismatch_is_an_error(fake_index, out):
    fake_index.pep658 = True
    fake_index.tampered.add("trl-0.15.2-py3-none-any.whl")
    with pytest.raises(PackageIndexError, match="sha256 mismatch"):
        run(fake_index, out, None, packages=["trl"])
    assert list(out.iterdir()) == []


def test_unknown_package_and_missing_page(fake_index, out):
    from compat.errors import UsageError

    with pytest.raises(UsageError, match="not a tracked package: numpy"):
        run(fake_index, out, None, packages=["numpy"])
    with pytest.raises(PackageIndexError, match="HTTP 404"):
        run(fake_index, out, None, packages=["peft"])  # not on this index
    assert list(out.iterdir()) == []


def test_index_url_comes_from_pip_index_url_and_credentials_are_redacted():
    url = read_settings({"PIP_INDEX_URL": "https://user:s3cret@mirror.example/simple/"}).index_url
    assert url == "https://user:s3cret@mirror.example/simple/"
    assert "s3cret" not in redact(url) and "mirror.example" in redact(url)
    assert read_settings({}).index_url is None


def test_error_messages_never_show_credentials(fake_index, out):
    url = fake_index.url.replace("http://", "http://me:s3cret@")
    client = IndexClient(url, http=HttpClient(timeout=2, retries=0))
    with pytest.raises(PackageIndexError) as info:
        refresh(["peft"], out_dir=out, client=client, cache_dir=None)
    assert "s3cret" not in str(info.value)


def test_cli_refresh(fake_index, out, tmp_path):
    result = CliRunner().invoke(
        app,
        ["matrix", "refresh", "trl", "vllm", "--index-url", fake_index.url, "--out", str(out), "--cache-dir", str(tmp_path / "c")],
    )
    assert result.exit_code == 0, result.output
    assert "trl: 1 releases, 1 metadata fetched: updated" in result.output
    assert "vllm: 3 releases, 2 metadata fetched, 1 without readable requirements: updated" in result.output
    again = CliRunner().invoke(
        app,
        ["matrix", "refresh", "trl", "vllm", "--index-url", fake_index.url, "--out", str(out), "--cache-dir", str(tmp_path / "c")],
    )
    assert "trl: 1 releases, 0 metadata fetched: unchanged" in again.output


def test_api_refresh_takes_the_index_and_cache_from_settings(fake_index, out, tmp_path):
    from compat import api
    from compat.report.matrix import render_refresh
    from compat.sources.settings import Settings

    settings = Settings(cache_dir=tmp_path / "c", index_url=fake_index.url.replace("http://", "http://me:s3cret@"))
    request = api.RefreshRequest(packages=("trl",), out=out, settings=settings, timeout=5.0)
    refreshed = api.matrix_refresh(request)
    assert "s3cret" not in refreshed.index and refreshed.index.endswith("/simple/")
    assert list((tmp_path / "c" / "metadata").rglob("*.metadata"))
    assert render_refresh(refreshed) == (
        f"trl: 1 releases, 1 metadata fetched: updated\n{refreshed.result.requests} requests to {refreshed.index}\n"
    )
    uncached = api.matrix_refresh(api.RefreshRequest(packages=("trl",), out=out, settings=settings, use_cache=False, timeout=5.0))
    assert [o.fetched for o in uncached.result.outcomes] == [1]
