"""A hostile package index on 127.0.0.1: empty pages, wrong JSON types, deep JSON, a server that
drips one byte at a time, a gzip bomb, a zip bomb in a wheel, and a page that lost releases."""

from __future__ import annotations

import functools
import io
import json
import time
import zipfile
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.support.loopback import serving

JSON = "application/vnd.pypi.simple.v1+json"
WHEEL = "vllm-0.7.2-py3-none-any.whl"
METADATA = b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.7.2\nRequires-Dist: torch==2.5.1\n"


def page(files: list[dict]) -> bytes:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "vllm", "files": files}).encode()


@functools.cache
def gzip_bomb(size: int = 80 * 1024 * 1024) -> bytes:
    """`size` zero bytes, gzip-compressed (about a thousandth of that on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1024 * 1024)
    return b"".join(packer.compress(block) for _ in range(size // len(block))) + packer.flush()


@functools.cache
def zip_bomb(size: int = 24 * 1024 * 1024) -> bytes:
    """A wheel whose METADATA inflates to `size` bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("vllm-0.7.2.dist-info/METADATA", METADATA + b"\0" * size)
    return buf.getvalue()


PAGES = {
    "empty": page([]),
    "types": page([{"filename": WHEEL, "url": 7, "hashes": {}}]),
    "types-upload": page([{"filename": WHEEL, "url": f"/files/{WHEEL}", "upload-time": {"when": "now"}}]),
    "deep": b"[" * 200_000,
    "not-json": b"{\"files\": [",
    "zip-bomb": page([{"filename": WHEEL, "url": f"/files/{WHEEL}", "hashes": {}}]),
    "partial": page([{"filename": WHEEL, "url": f"/files/{WHEEL}", "hashes": {}, "core-metadata": True,
                      "upload-time": "2025-02-06T00:00:00Z"}]),
}
"""The project page each mode serves; "drip" and "gzip-bomb" are answered in the handler."""


class HostileIndex:
    def __init__(self) -> None:
        self.mode = "empty"
        self.url = ""
        self.drip_s = 0.2

    def handler(self) -> type[BaseHTTPRequestHandler]:
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def send(self, body: bytes, ctype: str = JSON, extra: dict[str, str] | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if self.path.endswith(".metadata"):
                    return self.send(METADATA, "application/octet-stream")
                if self.path.endswith(".whl"):
                    return self.send(zip_bomb(), "application/zip")  # ignores Range: the whole file
                if index.mode == "drip":
                    return self.drip(page([]))
                if index.mode == "gzip-bomb":
                    return self.send(gzip_bomb(), JSON, {"Content-Encoding": "gzip"})
                self.send(PAGES[index.mode])

            def drip(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", JSON)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(index.drip_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


@pytest.fixture()
def hostile_index() -> Iterator[HostileIndex]:
    index = HostileIndex()
    with serving(index.handler()) as base:
        index.url = f"{base}/simple/"
        yield index
