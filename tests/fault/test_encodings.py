"""Text files in the encodings Windows tools write: read by their byte-order mark, never as garbled UTF-8.

Windows PowerShell 5.1's `>` writes UTF-16 LE with a BOM, so `compat facts > facts.json` or a training log
redirected there is UTF-16. explain read such a log as bytes ("no error found in the log": every "\\n" was
"\\n\\0"), and `--facts` and `-r` stopped at "'utf-8' codec can't decode byte 0xff", although pip reads a
requirements file by its BOM. compat.regular_file's `bom_encoding` now decides for all three.
"""

from __future__ import annotations

import gzip

import pytest

from compat.model.facts import dump_facts
from compat.regular_file import NotText, bom_encoding, decode_text, text_encoding
from tests.fault.fakes import compat_cli, one_line_error
from tests.fault.inputs import facts_with
from tests.support.main import compat_main

LINE = "ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata'"
ENCODINGS = ["utf-16", "utf-16-le-bom", "utf-16-be-bom", "utf-32", "utf-8-sig"]


def encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-16-le-bom":
        return b"\xff\xfe" + text.encode("utf-16-le")
    if encoding == "utf-16-be-bom":
        return b"\xfe\xff" + text.encode("utf-16-be")
    return text.encode(encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("how", ["file", "stdin", "gzip"])
def test_a_log_with_a_byte_order_mark_is_explained_as_its_text(tmp_path, encoding, how):
    data = encode(f"step 1\r\nTraceback (most recent call last):\r\n{LINE}\r\n", encoding)
    log = tmp_path / "train.log"
    log.write_bytes(gzip.compress(data) if how == "gzip" else data)
    if how == "stdin":  # a child: a real standard input is a buffered pipe, whose head can be peeked at
        result = compat_cli("explain", "-", "--no-env", "--no-config", stdin=data)
    else:
        result = compat_main("explain", str(log), "--no-env", "--no-config")
    assert result.returncode == 0, result
    assert b"vllm.model_executor.input_metadata" in result.stdout
    assert b"(line 3)" in result.stdout  # the lines counted are the text's, not the bytes'


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_facts_file_or_requirements_with_a_byte_order_mark_is_read(tmp_path, encoding):
    facts = tmp_path / "facts.json"
    facts.write_bytes(encode(dump_facts(facts_with()), encoding))
    requirements = tmp_path / "requirements.txt"
    requirements.write_bytes(encode("trl==0.15.2\r\nvllm==0.7.2\r\n", encoding))
    plain = tmp_path / "plain.txt"
    plain.write_text("trl==0.15.2\nvllm==0.7.2\n")
    assert compat_main("doctor", "--facts", str(facts), "--no-config").returncode == 0
    runs = [compat_main("doctor", "-r", str(path), "--gpus", "cpu", "--no-config", "--format", "json")
            for path in (requirements, plain)]
    assert runs[0].returncode == runs[1].returncode
    assert runs[0].stdout.replace(b"requirements.txt", b"plain.txt") == runs[1].stdout


def test_a_torn_utf16_file_is_a_one_line_error_or_read_with_replacements(tmp_path):
    torn = b"\xff\xfe" + "trl==0.15.2\n".encode("utf-16-le")[:-1]  # an odd byte count: half a character
    (tmp_path / "req.txt").write_bytes(torn)
    (tmp_path / "train.log").write_bytes(torn)
    result = compat_main("doctor", "-r", str(tmp_path / "req.txt"), "--gpus", "cpu", "--no-config")
    assert result.returncode == 2
    assert "truncated data" in one_line_error(result)
    assert compat_main("explain", str(tmp_path / "train.log"), "--no-env", "--no-config").returncode == 1


def test_the_mark_decides_and_text_without_one_is_utf8():
    assert bom_encoding(b"\xff\xfe\x00\x00") == "utf-32" and bom_encoding(b"\xff\xfeA\x00") == "utf-16"
    assert bom_encoding(b"trl=") is None and bom_encoding(b"") is None
    assert decode_text("\ufefftrl".encode()) == "trl"
    with pytest.raises(UnicodeDecodeError):
        decode_text(b"trl\xff")


NO_MARK = ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]


@pytest.mark.parametrize("encoding", NO_MARK)
def test_utf16_or_utf32_without_a_mark_is_read_by_its_nuls(tmp_path, encoding):
    # Read as UTF-8, such a log was one NUL-studded line: "no error found in the log", a silent unknown.
    log = tmp_path / "train.log"
    log.write_bytes(f"step 1\nTraceback (most recent call last):\n{LINE}\n".encode(encoding))
    result = compat_main("explain", str(log), "--no-env", "--no-config")
    assert result.returncode == 0, result
    assert b"(line 3)" in result.stdout
    requirements = tmp_path / "requirements.txt"
    requirements.write_bytes("trl==0.15.2\nvllm==0.7.2\n".encode(encoding))
    facts = tmp_path / "facts.json"
    facts.write_bytes(dump_facts(facts_with()).encode(encoding))
    assert compat_main("doctor", "--facts", str(facts), "--no-config").returncode == 0
    doctor = compat_main("doctor", "-r", str(requirements), "--gpus", "cpu", "--no-config", "--format", "json")
    assert b'"vllm"' in doctor.stdout and doctor.returncode in (0, 1), doctor


def test_a_binary_file_is_a_one_line_error_for_a_log_facts_and_requirements(tmp_path):
    binary = tmp_path / "model.pt"
    binary.write_bytes(b"\x80\x02ctorch\n" + bytes(300) + b"abc" * 50)
    runs = [
        compat_main("explain", str(binary), "--no-env", "--no-config"),
        compat_main("doctor", "--facts", str(binary), "--no-config"),
        compat_main("doctor", "-r", str(binary), "--gpus", "cpu", "--no-config"),
    ]
    for result in runs:
        assert result.returncode == 2, result
        assert "a binary file (NUL bytes), not text" in one_line_error(result)


def test_a_hole_of_nuls_before_a_utf8_log_is_not_binary(tmp_path):
    # logrotate's copytruncate leaves the writer at its old offset: the file starts with NULs, then text.
    log = tmp_path / "train.log"
    log.write_bytes(bytes(5001) + f"Traceback (most recent call last):\n{LINE}\n".encode())
    result = compat_main("explain", str(log), "--no-env", "--no-config")
    assert result.returncode == 0, result
    assert b"vllm.model_executor.input_metadata" in result.stdout


def test_nul_patterns_decide_only_without_a_mark():
    assert text_encoding("trl".encode("utf-16-le")) == "utf-16-le"
    assert text_encoding("trl".encode("utf-16-be")) == "utf-16-be"
    assert text_encoding("trl".encode("utf-32-le")) == "utf-32-le"
    assert text_encoding("trl".encode("utf-16")) == "utf-16"  # the mark first
    assert text_encoding(b"trl==1\n") is None and text_encoding(bytes(64)) is None
    with pytest.raises(NotText):
        decode_text(b"PK\x03\x04\x14\x00\x00\x00\x08\x00")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_a_config_or_accelerate_config_in_utf16_is_read_as_its_text(tmp_path, encoding):
    # Both were read as UTF-8 only: "'utf-8' codec can't decode byte 0xff" with a mark, "not TOML" without one.
    config = tmp_path / "compat.toml"
    config.write_bytes('gpus = "8xH100"\n'.encode(encoding))
    accelerate = tmp_path / "accelerate.yaml"
    accelerate.write_bytes("distributed_type: MULTI_GPU\nnum_processes: 2\n".encode(encoding))
    result = compat_main("doctor", "--config", str(config), "--accelerate-config", str(accelerate))
    assert result.returncode in (0, 1), result
    assert "8 × H100".encode() in result.stdout and b"accelerate MULTI_GPU" in result.stdout
