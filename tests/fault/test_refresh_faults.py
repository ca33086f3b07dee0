"""`compat matrix refresh` against a hostile index: validated, timed out as a whole, bounded; no file lost."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compat.errors import PackageIndexError
from compat.maintain.index import IndexClient
from compat.maintain.refresh import refresh
from compat.sources.http import HttpClient
from tests.fault.fakes import REPO, Clock, one_line_error
from tests.fault.hostile_index import gzip_bomb, zip_bomb
from tests.support.main import compat_main

SHIPPED = REPO / "matrix" / "releases" / "vllm.toml"


@pytest.fixture()
def out(tmp_path):
    directory = tmp_path / "releases"
    directory.mkdir()
    shutil.copy(SHIPPED, directory / "vllm.toml")
    return directory


def _refresh(index_url: str, out: Path, *, total: float) -> None:
    client = IndexClient(index_url, http=HttpClient(timeout=2, total_timeout=total, retries=1, backoff=0.01))
    refresh(("vllm",), out_dir=out, client=client, cache_dir=None, workers=2)


@pytest.mark.parametrize("mode, message", [
    ("empty", "lists no final release; refusing to write vllm.toml"),
    ("partial", "the index no longer lists"),
    ("types", "malformed project page (vllm-0.7.2-py3-none-any.whl: 'url' is a JSON int)"),
    ("types-upload", "'upload-time' is a JSON dict"),
    ("deep", "malformed project page"),
    ("not-json", "malformed project page"),
    ("gzip-bomb", "response larger than the 64 MiB allowed"),
    ("zip-bomb", "METADATA larger than 16 MiB"),
    ("drip", "not complete after 2 s (server too slow)"),
])
def test_a_hostile_answer_is_one_error_and_the_file_is_untouched(hostile_index, out, mode, message):
    hostile_index.mode = mode
    gzip_bomb(), zip_bomb()  # built before the clock starts (a busy CI machine compresses slowly)
    before = (out / "vllm.toml").read_bytes()
    with Clock() as clock, pytest.raises(PackageIndexError) as caught:
        _refresh(hostile_index.url, out, total=2 if mode == "drip" else 20)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert clock.seconds < (8 if mode == "drip" else 25)  # the drip is cut at its 2 s, not after each byte
    assert (out / "vllm.toml").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["vllm.toml"]


def test_the_cli_says_why_it_refuses_to_drop_releases(hostile_index, out):
    hostile_index.mode = "partial"
    result = compat_main("matrix", "refresh", "vllm", "--index-url", hostile_index.url, "--out", str(out),
                        "--timeout", "2")
    assert result.returncode == 2
    line = one_line_error(result)
    assert "refusing to drop them" in line and "0.1.0" in line


def test_kill_9_during_refresh_loses_no_file(hostile_index, out):
    hostile_index.mode = "drip"
    before = (out / "vllm.toml").read_bytes()
    env = {**os.environ, "PYTHONPATH": str(REPO), "COMPAT_NO_CACHE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "compat", "matrix", "refresh", "vllm", "--index-url", hostile_index.url,
         "--out", str(out), "--timeout", "5"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert (out / "vllm.toml").read_bytes() == before


WRITER = """
import sys
from pathlib import Path
from compat.atomic import write_atomic
target, a, b = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes(), Path(sys.argv[3]).read_bytes()
print("ready", flush=True)
while True:
    write_atomic(target, a)
    write_atomic(target, b)
"""


def test_kill_9_in_the_middle_of_a_write_leaves_the_old_or_the_new_file(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"A" * 3_000_000)
    b.write_bytes(b"B" * 2_000_000)
    target = tmp_path / "out" / "vllm.toml"
    target.parent.mkdir()
    shutil.copy(a, target)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rng = random.Random(12)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(a), str(b)], env=env,
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.05, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        proc.stdout.close()
        assert target.read_bytes() in (a.read_bytes(), b.read_bytes())
