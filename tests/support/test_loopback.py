"""The loopback index server stays silent when a client hangs up, and loud about anything else.

A handler thread can outlive its test (a client that timed out on purpose); what it prints then lands in
whichever test has sys.stderr captured, which once failed a golden file in CI.
"""

from __future__ import annotations

import pytest

from tests.support.loopback import _Server


@pytest.fixture
def server():
    from http.server import BaseHTTPRequestHandler

    srv = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler)
    yield srv
    srv.server_close()


@pytest.mark.parametrize("gone", [BrokenPipeError, ConnectionResetError, TimeoutError])
def test_a_client_that_hung_up_prints_nothing(server, capsys, gone):
    try:
        raise gone("client went away")
    except OSError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""


def test_a_handler_bug_is_still_printed(server, capsys):
    try:
        raise ValueError("a bug in a fake index")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a bug in a fake index" in capsys.readouterr().err
