"""`compat lock --full`: uv closes the set around compat's pins, against a package index on 127.0.0.1.

The index serves tiny wheels built here: `alpha` (tracked through a --matrix overlay, so compat
pins it) requires `beta`, which compat does not track; uv must add beta, with hashes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compat.cli import app
from compat.errors import UsageError
from compat.sources.uv_compile import find_uv, is_offline, last_lines
from tests.support.loopback import serving
from tests.support.wheels import wheel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed")

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_retries(monkeypatch):
    """uv retries a refused connection three times with backoff (about 11 s in all); the offline tests need only its
    first answer, and a retry proves nothing compat does. compat passes its environment to uv as it is."""
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")


def _wheel(name: str, version: str, requires: tuple[str, ...] = ()) -> bytes:
    return wheel(name, version, requires, ">=3.8", modules={f"{name}/__init__.py": f"VERSION = {version!r}\n".encode()})


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("index")
    wheels = {
        ("alpha", "1.0"): ("beta>=1",),
        ("alpha", "2.0"): ("beta>=2",),
        ("beta", "1.0"): (),
        ("beta", "2.0"): (),
    }
    for (name, version), requires in wheels.items():
        data = _wheel(name, version, requires)
        filename = f"{name}-{version}-py3-none-any.whl"
        (root / "files").mkdir(exist_ok=True)
        (root / "files" / filename).write_bytes(data)
        page = root / "simple" / name
        page.mkdir(parents=True, exist_ok=True)
        sha = hashlib.sha256(data).hexdigest()
        with (page / "index.html").open("a") as fh:
            fh.write(f'<a href="../../files/{filename}#sha256={sha}" data-requires-python="&gt;=3.8">{filename}</a>\n')
    with serving(partial(_Quiet, directory=str(root))) as base:
        yield f"{base}/simple"



class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def overlay(tmp_path_factory):
    root = tmp_path_factory.mktemp("overlay")
    (root / "releases").mkdir()
    (root / "releases" / "alpha.toml").write_text(
        'package = "alpha"\nsource = "test index"\n\n'
        '[[release]]\nversion = "1.0"\nuploaded = "2025-01-01"\nrequires_python = ">=3.8"\nrequires = []\n\n'
        '[[release]]\nversion = "2.0"\nuploaded = "2025-06-01"\nrequires_python = ">=3.8"\nrequires = []\n'
    )
    return root


# The running interpreter's version: the pylock test installs the lock into a venv of this interpreter.
PYTHON_VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


def _lock(index: str, overlay: Path, *args: str):
    return runner.invoke(app, ["lock", *args, "--gpus", "cpu", "--python-version", PYTHON_VERSION, "--matrix", str(overlay),
                               "--full", "--index-url", index])


def test_full_closes_the_set_with_hashes(index, overlay, tmp_path):
    out = tmp_path / "requirements.txt"
    result = _lock(index, overlay, "alpha==1.0", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("# compat lock alpha==1.0 --full\n")
    assert "#   alpha==1.0  # target alpha==1.0" in text
    lines = text.splitlines()
    assert "alpha==1.0 \\" in lines and "beta==2.0 \\" in lines  # beta: not tracked, added by uv
    assert text.count("--hash=sha256:") == 2


def test_full_writes_a_pep751_pylock_that_uv_installs(index, overlay, tmp_path):
    out = tmp_path / "pylock.toml"
    result = _lock(index, overlay, "alpha==1.0", "-o", str(out))
    assert result.exit_code == 0, result.output
    doc = tomllib.loads(out.read_text())
    assert doc["lock-version"] == "1.0" and doc["created-by"] == "uv"
    packages = {p["name"]: p for p in doc["packages"]}
    assert {n: p["version"] for n, p in packages.items()} == {"alpha": "1.0", "beta": "2.0"}
    for p in packages.values():
        (wheel,) = p["wheels"]
        assert wheel["url"].startswith(index.rsplit("/simple", 1)[0]) and len(wheel["hashes"]["sha256"]) == 64
    uv = find_uv()
    env = tmp_path / "venv"
    subprocess.run([uv, "venv", "--python", sys.executable, "--no-config", str(env)], check=True, capture_output=True)
    done = subprocess.run([uv, "pip", "sync", "--python", str(env), "--no-config", "--index-url", index, str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    check = subprocess.run([str(env / "bin" / "python"), "-c", "import alpha, beta; print(alpha.VERSION, beta.VERSION)"],
                           capture_output=True, text=True)
    assert check.stdout.split() == ["1.0", "2.0"]


def test_a_failed_lock_leaves_the_previous_file_intact(index, overlay, tmp_path):
    out = tmp_path / "requirements.txt"
    out.write_text("previous\n")
    no_set = _lock(index, overlay, "alpha==3.0", "-o", str(out))
    assert no_set.exit_code == 1
    unknown = _lock(index, overlay, "nosuchpkg", "-o", str(out))
    assert unknown.exit_code != 0
    assert out.read_text() == "previous\n"


def test_offline_full_is_an_error_that_names_what_is_missing(overlay, tmp_path):
    out = tmp_path / "requirements.txt"
    out.write_text("previous\n")
    result = _lock("http://127.0.0.1:9/simple", overlay, "alpha==1.0", "-o", str(out))
    assert isinstance(result.exception, UsageError)  # exit 2 at the command line
    message = str(result.exception)
    assert "--full is incomplete" in message and "1 tracked pins" in message and "--allow-partial" in message
    assert "\n" not in message
    assert out.read_text() == "previous\n"


def test_offline_allow_partial_writes_the_tracked_lock_and_says_so(overlay, tmp_path):
    out = tmp_path / "requirements.txt"
    result = _lock("http://127.0.0.1:9/simple", overlay, "alpha==1.0", "-o", str(out), "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "partial lock (--allow-partial)" in result.stderr
    text = out.read_text()
    assert text.startswith("# tracked packages only (1 pins): uv pip compile could not close the set")
    assert "alpha==1.0  # target alpha==1.0" in text and "--hash" not in text


def test_offline_a_pylock_is_not_written(overlay, tmp_path):
    out = tmp_path / "pylock.toml"
    result = _lock("http://127.0.0.1:9/simple", overlay, "alpha==1.0", "-o", str(out))
    assert result.exit_code != 0 and "needs the package index" in str(result.exception)
    assert not out.exists()


def test_pylock_needs_full(tmp_path):
    result = runner.invoke(app, ["lock", "torch", "--gpus", "cpu", "--python-version", "3.11", "-o", str(tmp_path / "pylock.toml")])
    assert "add --full" in str(result.exception)


@pytest.mark.parametrize("name", ["NAME.pylock.toml", "lock.toml"])
def test_a_toml_name_that_is_not_pep751_is_refused_not_filled_with_requirements(tmp_path, name):
    out = tmp_path / name
    result = runner.invoke(app, ["lock", "torch", "--gpus", "cpu", "--python-version", "3.11", "-o", str(out)])
    assert isinstance(result.exception, UsageError)
    assert "pylock.NAME.toml" in str(result.exception)
    assert not out.exists()


class _Broken(BaseHTTPRequestHandler):
    """An index that answers 500, closes the connection in the middle of a page, or never answers."""

    mode = "500"

    def do_GET(self) -> None:
        if self.mode == "hang":
            time.sleep(30)
            return
        if self.mode == "500":
            self.send_response(500)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"oops\n")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.write(b"<html><body><a href=")
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("mode", ["500", "mid-body", "hang"])
def test_a_broken_index_never_gives_exit_0_with_tracked_pins_only(overlay, tmp_path, mode, monkeypatch):
    monkeypatch.setenv("UV_HTTP_TIMEOUT", "1")  # the hanging index: uv gives up after 1 s, not its default 30 s
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    handler = type("Handler", (_Broken,), {"mode": mode})
    out = tmp_path / "requirements.txt"
    with serving(handler) as url:
        result = _lock(f"{url}/simple", overlay, "alpha==1.0", "-o", str(out))
    assert result.exit_code != 0 and isinstance(result.exception, UsageError), result.output
    assert "uv pip compile" in str(result.exception)
    assert not out.exists()


def test_uv_output_is_read_as_offline_or_not():
    assert is_offline("error: Failed to fetch: `http://127.0.0.1:9/simple/alpha/`\n  Caused by: tcp connect error")
    assert not is_offline("  × No solution found when resolving dependencies:\n  ╰─▶ Because alpha==3.0 was not found")
    assert last_lines("") == "uv pip compile failed"


@pytest.mark.parametrize("name", ["pylock.train.toml", "requirements.txt"])
def test_doctor_reads_back_what_full_writes(index, overlay, tmp_path, name):
    """compat's own lock passes compat's own gate: `doctor -r` reads the pylock.toml (PEP 751) and the
    hashed requirements file (`\\` continuations, `--hash`) that `lock --full` writes."""
    out = tmp_path / name
    result = _lock(index, overlay, "alpha==1.0", "-o", str(out))
    assert result.exit_code == 0, result.output
    judged = runner.invoke(app, ["doctor", "--json", "-r", str(out), "--gpus", "cpu", "--matrix", str(overlay),
                                 "--fail-on", "warning", "--no-config"])
    assert judged.exception is None or isinstance(judged.exception, SystemExit), judged.output
    report = json.loads(judged.stdout)
    assert {p["name"]: p["version"] for p in report["facts"]["packages"]} == {"alpha": "1.0", "beta": "2.0"}
    assert judged.exit_code == 0, [f["id"] for f in report["findings"] if f["status"] == "found"]
