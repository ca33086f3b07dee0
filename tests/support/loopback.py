"""A real HTTP server on 127.0.0.1 for the tests that need a package index (fake, hostile or plain)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up early (a timeout test, a refused download) leaves its handler thread
        # writing to a closed socket after the test ended; the default prints that traceback to whatever
        # sys.stderr is then, which may be a later test's CliRunner capture, making its output flaky.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on a free loopback port for the block; yields `http://127.0.0.1:PORT`."""
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def byte_range(whole: bytes, header: str) -> tuple[bytes, dict[str, str]]:
    """The part of `whole` a `Range: bytes=...` header asks for (suffix `-N` included), and its Content-Range."""
    start_s, _, end_s = header.removeprefix("bytes=").partition("-")
    size = len(whole)
    if not start_s:
        start, end = max(0, size - int(end_s)), size - 1
    else:
        start, end = int(start_s), min(size - 1, int(end_s) if end_s else size - 1)
    return whole[start : end + 1], {"Content-Range": f"bytes {start}-{end}/{size}"}
