"""A package index on 127.0.0.1 that serves the matrix's releases as tiny wheels, so printed pip commands can run.

Each wheel holds only its METADATA: the release's recorded requirements on the packages this index serves
(everything else a real release requires is left out, so pip resolves within the served set) and its
Requires-Python. Wheels are built on request and kept for the session.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from compat.matrix import Matrix
from tests.support.loopback import serving
from tests.support.wheels import wheel


class MatrixIndex:
    """The releases of `packages` in `matrix`, plus `extra` (name, version) wheels without requirements."""

    def __init__(self, matrix: Matrix, packages: Sequence[str], extra: Sequence[tuple[str, str]] = ()) -> None:
        self.matrix = matrix
        self.packages = frozenset(str(canonicalize_name(p)) for p in packages)
        self.extra = {(str(canonicalize_name(n)), v) for n, v in extra}
        self._wheels: dict[str, bytes] = {}

    def versions(self, name: str) -> list[tuple[str, str | None, bool]]:
        """(version, Requires-Python, yanked) of each release served."""
        out: list[tuple[str, str | None, bool]] = [(v, None, False) for n, v in sorted(self.extra) if n == name]
        releases = self.matrix.releases.get(name) if name in self.packages else None
        for r in releases.releases if releases else ():
            out.append((str(r.version), str(r.requires_python) if r.requires_python else None, bool(r.yanked)))
        return out

    def page(self, name: str) -> bytes | None:
        found = self.versions(name)
        if not found:
            return None
        links = []
        for version, python, yanked in found:
            filename = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
            attr = f' data-requires-python="{python.replace(">", "&gt;").replace("<", "&lt;")}"' if python else ""
            attr += ' data-yanked=""' if yanked else ""
            links.append(f'<a href="/files/{name}/{filename}"{attr}>{filename}</a>')
        return ("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n").encode()

    def file(self, name: str, filename: str) -> bytes | None:
        version = filename.removesuffix("-py3-none-any.whl").split("-", 1)[-1]
        if filename not in self._wheels:
            if (name, version) in self.extra:
                self._wheels[filename] = wheel(name, version, (), None, ())
            else:
                releases = self.matrix.releases.get(name)
                release = next((r for r in releases.releases if str(r.version) == version), None) if releases else None
                if release is None:
                    return None
                requires = [str(r) for r in release.requires or () if self._served(r)]
                python = str(release.requires_python) if release.requires_python else None
                self._wheels[filename] = wheel(name, version, requires, python, tuple(release.extras))
        return self._wheels[filename]

    def _served(self, req: Requirement) -> bool:
        name = str(canonicalize_name(req.name))
        return name in self.packages or any(n == name for n, _ in self.extra)


@contextmanager
def serve(index: MatrixIndex) -> Iterator[str]:
    """Serve `index`; yields its simple-API root (`http://127.0.0.1:PORT/simple`)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = [unquote(p) for p in self.path.split("?")[0].strip("/").split("/")]
            body = None
            if len(parts) == 2 and parts[0] == "simple":
                body = index.page(str(canonicalize_name(parts[1])))
                kind = "text/html"
            elif len(parts) == 3 and parts[0] == "files":
                body = index.file(parts[1], parts[2])
                kind = "application/octet-stream"
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as base:
        yield f"{base}/simple"
