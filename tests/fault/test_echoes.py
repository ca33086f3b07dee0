"""Inputs echoed back: bidirectional overrides and URL credentials that a path's normalisation hid.

A U+202E inside a package name, a log line, a requirement or a file name reached the terminal, the JSON
and the -o file as it was (compat.printable removed C0/C1 controls and escape sequences only), making the
rest of the line display reversed. A URL given where a path is expected came back from `Path` as
`https:/user:password@host`, which the one-slash-blind credential pattern of compat.redact let through.
"""

from __future__ import annotations

import json

import pytest

from compat.model.facts import dump_facts
from compat.printable import one_line, terminal_safe, xml_safe
from compat.redact import redact_text
from tests.fault.inputs import facts_with
from tests.support.main import compat_main

BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
"""Embeddings, overrides, the pop, and the isolates: each reorders what follows it on the line."""
LOG = "ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata' {}(from train.py)\n"


def _no_bidi(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    assert not any(c in text for c in BIDI), text[-400:]


@pytest.mark.parametrize("char", BIDI)
def test_the_printable_helpers_drop_every_bidi_control_and_keep_the_text(char):
    text = f"trl{char}1.0== \u05e9\u05dc\u05d5\u05dd \u200f"  # Hebrew and a right-to-left mark stay
    for safe in (terminal_safe(text), terminal_safe(text, keep_colour=True), one_line(text), xml_safe(text)):
        assert safe == "trl1.0== \u05e9\u05dc\u05d5\u05dd \u200f"


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_a_bidi_override_in_a_log_line_reaches_no_output(tmp_path, fmt):
    log = tmp_path / "train.log"
    log.write_text(LOG.format("\u202e"))
    result = compat_main("explain", str(log), "--no-env", "--no-config", "--format", fmt)
    assert result.returncode == 0, result
    assert b"input_metadata" in result.stdout or fmt == "github"  # github: a one-line summary, no log line
    _no_bidi(result.stdout + result.stderr)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github", "sarif", "junit"])
def test_a_bidi_override_in_a_package_name_reaches_neither_stdout_nor_the_o_file(tmp_path, fmt):
    facts = tmp_path / "facts.json"
    facts.write_text(dump_facts(facts_with(packages={"trl\u202e2.0": "0.15.2", "vllm": "0.7.2", "torch": "2.5.1"})))
    out = tmp_path / "report"
    for args in ((), ("-o", str(out))):
        result = compat_main("doctor", "--facts", str(facts), "--no-config", "--format", fmt, *args)
        assert result.returncode in (0, 1), result
        _no_bidi(result.stdout + result.stderr)
    _no_bidi(out.read_bytes())
    if fmt == "json":
        json.loads(out.read_text())  # the filter removed characters, never broke the document


@pytest.mark.parametrize("args", [
    ("lock", "trl\u202e", "--gpus", "cpu", "--no-config"),
    ("doctor", "-r", "missing\u2067.txt", "--gpus", "cpu", "--no-config"),
    ("explain", "missing\u202e.log", "--no-env", "--no-config"),
])
def test_a_bidi_override_in_an_argument_is_not_echoed_raw_in_its_error(args):
    result = compat_main(*args)
    assert result.returncode == 2, result
    _no_bidi(result.stdout + result.stderr)


@pytest.mark.parametrize("args", [
    ("doctor", "--facts", "/nonexistent/https://alice:s3cr3t-pw@mirror.example/facts.json", "--no-config"),
    ("explain", "https://alice:s3cr3t-pw@mirror.example/train.log", "--no-env", "--no-config"),
    ("doctor", "-r", "https://alice:s3cr3t-pw@mirror.example/req.txt", "--gpus", "cpu", "--no-config"),
    ("doctor", "--python", "https://alice:s3cr3t-pw@mirror.example/", "--no-config"),
])
def test_a_url_with_credentials_given_as_a_path_is_masked_in_the_error(args):
    _masked(compat_main(*args))


def test_a_url_include_with_credentials_in_a_requirements_file_is_masked_in_the_error(tmp_path):
    # pip reads `-r URL`; compat reads a path, and the error named the path with the password (on main before this).
    (tmp_path / "requirements.txt").write_text("trl==0.15.2\n-r https://alice:s3cr3t-pw@mirror.example/base.txt\n")
    _masked(compat_main("doctor", "-r", str(tmp_path / "requirements.txt"), "--gpus", "cpu", "--no-config"))


def _masked(result):
    assert result.returncode == 2, result
    assert b"s3cr3t-pw" not in result.stdout + result.stderr
    assert b"***@mirror.example" in result.stderr


@pytest.mark.parametrize("text, kept", [
    ("cannot read /x/https:/alice:pw@host/f: missing", "cannot read /x/https:/***@host/f: missing"),
    ("git@github.com:org/repo.git", "git@github.com:org/repo.git"),  # a bare user is no secret
    ("file:/tmp/a.log", "file:/tmp/a.log"),
])
def test_credentials_after_one_slash_are_masked(text, kept):
    assert redact_text(text) == kept


def test_a_secret_assigned_in_a_log_line_is_masked_where_explain_quotes_it(tmp_path):
    log = tmp_path / "train.log"
    log.write_text('Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n'
                   "RuntimeError: login failed: WANDB_API_KEY=plainsecret123 AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG "
                   "TOKENIZERS_PARALLELISM=false\n")
    for fmt in ("text", "json", "markdown"):
        result = compat_main("explain", str(log), "--no-env", "--no-config", "--format", fmt)
        out = result.stdout + result.stderr
        assert b"login failed" in out
        assert b"plainsecret123" not in out and b"wJalrXUtnFEMI" not in out, out[-600:]
        assert b"TOKENIZERS_PARALLELISM=false" in out  # a switch under a secret-looking name is kept


@pytest.mark.parametrize("text, kept", [
    ("export HF_TOKEN=abc123 && run", "export HF_TOKEN=*** && run"),
    ('PASSWORD="two words";', "PASSWORD=***;"),
    ("HF_TOKEN=$HF_TOKEN TOKENIZERS_PARALLELISM=false", "HF_TOKEN=$HF_TOKEN TOKENIZERS_PARALLELISM=false"),
    ("NCCL_IB_PKEY=0x8001 LD_LIBRARY_PATH=/usr/lib", "NCCL_IB_PKEY=0x8001 LD_LIBRARY_PATH=/usr/lib"),
    ("auth==1.0 tokenizer=tok max_tokens=8", "auth==1.0 tokenizer=tok max_tokens=8"),  # a pin, Python keywords
    # lower-case secret keywords (a traceback's keyword argument, a connection string) lose their value too
    ("connect(password=hunter2pw, user=bob)", "connect(password=***, user=bob)"),
    ("from_pretrained(m, token=abc123, pad_token=<pad>)", "from_pretrained(m, token=***, pad_token=<pad>)"),
    ("f(token=None, api_key='k-1234')", "f(token=None, api_key=***)"),
])
def test_secret_named_assignments_lose_their_value(text, kept):
    assert redact_text(text) == kept
