"""A real HTTP package index on 127.0.0.1 serving recorded project pages and core metadata.

Pages under tests/data/index/simple/ were recorded from the public index (file links made
relative); metadata files are the real `*.dist-info/METADATA` of those wheels. Wheels are built
on the fly around the recorded METADATA, with incompressible padding so that reading it needs
range requests. Faults (HTTP 500, slow answers, truncated bodies) are injected per path.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import random
import re
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.support.loopback import byte_range, serving

DATA = Path(__file__).resolve().parent.parent / "data" / "index"
PROJECTS = ("deepspeed", "torch", "trl", "vllm")


@dataclass
class Fault:
    path: str
    """Substring of the request path this fault applies to."""
    kind: str
    """"500", "slow", "truncate" or "404"."""
    times: int
    """How many matching requests fail (then the path behaves)."""


@dataclass
class FakeIndex:
    json_pages: bool = False
    """Answer PEP 691 JSON when the client accepts it (else PEP 503 HTML)."""
    pep658: bool = False
    """Advertise and serve `<file>.metadata`."""
    slow_s: float = 1.0
    faults: list[Fault] = field(default_factory=list)
    tampered: set[str] = field(default_factory=set)
    """Files whose `.metadata` is served altered (so its advertised sha256 no longer matches)."""
    log: list[str] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def metadata(self, filename: str) -> bytes | None:
        path = DATA / "metadata" / f"{filename}.metadata"
        return path.read_bytes() if path.is_file() else None

    def wheel(self, filename: str) -> bytes | None:
        meta = self.metadata(filename)
        if meta is None:
            return None
        name, version = filename.split("-")[:2]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            padding = random.Random(filename).randbytes(200_000)
            zf.writestr(f"{name}/_padding.bin", padding, compress_type=zipfile.ZIP_STORED)
            zf.writestr(f"{name}-{version}.dist-info/METADATA", meta, compress_type=zipfile.ZIP_DEFLATED)
            zf.writestr(f"{name}-{version}.dist-info/WHEEL", b"Wheel-Version: 1.0\n")
        return buf.getvalue()

    def page(self, project: str, as_json: bool) -> bytes | None:
        path = DATA / "simple" / f"{project}.html"
        if not path.is_file():
            return None
        text = path.read_text()
        if self.pep658:
            def add(m: re.Match) -> str:
                name = m.group(2)
                meta = self.metadata(name)
                if meta is None:
                    return m.group(0)
                digest = hashlib.sha256(meta).hexdigest()
                return m.group(1).replace("<a ", f'<a data-core-metadata="sha256={digest}" ', 1) + name + "</a>"
            text = re.sub(r'(<a [^>]*>)([^<]+)</a>', add, text)
        if not as_json:
            return text.encode()
        files = []
        for m in re.finditer(r"<a ([^>]*)>([^<]+)</a>", text):
            attrs = {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', m.group(1))}
            href, _, frag = attrs["href"].partition("#")
            entry = {"filename": m.group(2), "url": href, "hashes": dict([frag.split("=", 1)]) if frag else {}}
            if "data-requires-python" in attrs:
                entry["requires-python"] = attrs["data-requires-python"]
            if "data-upload-time" in attrs:
                entry["upload-time"] = attrs["data-upload-time"]
            if "data-yanked" in attrs:
                entry["yanked"] = attrs["data-yanked"] or True
            if "data-core-metadata" in attrs:
                entry["core-metadata"] = dict([attrs["data-core-metadata"].split("=", 1)])
            files.append(entry)
        doc = {"meta": {"api-version": "1.1"}, "name": project, "files": files}
        return json.dumps(doc).encode()

    def take_fault(self, path: str) -> str | None:
        with self.lock:
            for fault in self.faults:
                if fault.path in path and fault.times > 0:
                    fault.times -= 1
                    return fault.kind
        return None

    def count(self, needle: str) -> int:
        with self.lock:
            return sum(needle in line for line in self.log)


def _handler(index: FakeIndex):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep pytest output clean
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/octet-stream", extra: dict | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path
            rng = self.headers.get("Range", "")
            with index.lock:
                index.log.append(f"GET {path} {rng}".strip())
            fault = index.take_fault(path)
            if fault == "500":
                return self._send(500, b"upstream trouble")
            if fault == "404":
                return self._send(404, b"")
            if fault == "slow":
                time.sleep(index.slow_s)
            body, ctype, status, extra = self._route(path, rng)
            if body is None:
                return self._send(404, b"not found")
            if fault == "truncate":
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self._send(status, body, ctype, extra)

        def _route(self, path: str, rng: str):
            m = re.fullmatch(r"/simple/([\w.-]+)/", path)
            if m:
                as_json = index.json_pages and "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", "")
                body = index.page(m.group(1), as_json)
                ctype = "application/vnd.pypi.simple.v1+json" if as_json else "text/html"
                return body, ctype, 200, {}
            m = re.fullmatch(r"/files/([^/]+)\.metadata", path)
            if m:
                body = index.metadata(m.group(1)) if index.pep658 else None
                if body is not None and m.group(1) in index.tampered:
                    body += b"Requires-Dist: vllm==9.9.9\n"
                return body, "application/octet-stream", 200, {}
            m = re.fullmatch(r"/files/([^/]+\.whl)", path)
            if m:
                whole = index.wheel(m.group(1))
                if whole is None or not rng:
                    return whole, "application/zip", 200, {}
                part, headers = byte_range(whole, rng)
                return part, "application/octet-stream", 206, headers
            return None, "text/plain", 404, {}

    return Handler


@pytest.fixture
def fake_index():
    index = FakeIndex()
    with serving(_handler(index)) as base:
        index.url = f"{base}/simple/"
        yield index
