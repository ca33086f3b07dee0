"""The TOML table reader every matrix loader is built on: each error names the file and the key."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.errors import MatrixError
from compat.matrix._toml import Table, read_toml

DOC = """
name = "x"
blank = "  "
count = 3
flag = true
names = ["a", "b"]
mixed = ["a", 2]
version = "2.5.1"
bad_version = "two"
spec = ">=2.5,<2.7"
empty_spec = ""
bad_spec = "=>2.5"
marker = 'sys_platform == "linux"'
bad_marker = "linux and"
reqs = ["torch==2.5.1", "vllm>=0.7; extra == 'vllm'"]
bad_reqs = ["torch=2.5.1"]
open_extras = ["trl["]
not_tables = [1]
[sub]
inner = 1
[[rows]]
a = 1
"""


@pytest.fixture()
def t(tmp_path) -> Table:
    path = tmp_path / "doc.toml"
    path.write_text(DOC)
    return read_toml(path, label="matrix/doc.toml")


def test_values_of_each_kind(t):
    assert t.str("name") == "x"
    assert t.int("count") == 3
    assert t.bool("flag") is True
    assert t.strs("names") == ("a", "b")
    assert t.version("version") == Version("2.5.1")
    assert str(t.specifier("spec")) == "<2.7,>=2.5"
    assert str(t.specifier("empty_spec")) == ""
    assert str(t.marker("marker")) == 'sys_platform == "linux"'
    assert [str(r) for r in t.requirements("reqs")] == ["torch==2.5.1", "vllm>=0.7; extra == \"vllm\""]
    assert t.table("sub").int("inner") == 1
    assert t.tables("rows")[0].int("a") == 1


def test_defaults_are_returned_as_given(t):
    sentinel = object()
    for read in (t.str, t.int, t.bool, t.strs, t.table, t.tables, t.version, t.specifier, t.marker, t.requirements):
        assert read("absent", sentinel) is sentinel


@pytest.mark.parametrize(
    ("read", "key", "message"),
    [
        ("str", "absent", "matrix/doc.toml: absent: missing"),
        ("str", "blank", "blank: must not be empty"),
        ("int", "flag", "flag: expected an integer, got bool"),
        ("bool", "count", "count: expected true or false, got int"),
        ("strs", "mixed", "mixed[1]: expected a string, got int"),
        ("version", "bad_version", "bad_version: 'two' is not a version"),
        ("specifier", "bad_spec", "bad_spec: '=>2.5' is not a PEP 440 specifier"),
        ("marker", "bad_marker", "bad_marker: 'linux and' is not a PEP 508 marker"),
        ("requirements", "bad_reqs", "bad_reqs[0]: 'torch=2.5.1' is not a PEP 508 requirement"),
        ("tables", "not_tables", "not_tables[0]: expected a table"),
        ("table", "name", "name: expected a table, got str"),
    ],
)
def test_errors_name_the_file_and_the_key(t, read, key, message):
    with pytest.raises(MatrixError) as info:
        getattr(t, read)(key)
    assert message in str(info.value)
    assert str(info.value).startswith("matrix/doc.toml: ")


def test_a_parse_error_packaging_draws_over_lines_is_one_line(t):
    # packaging's message ends with the text and a caret on lines of their own; `matrix validate` prints one a line
    with pytest.raises(MatrixError) as info:
        t.requirements("open_extras")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("matrix/doc.toml: open_extras[0]: 'trl[' is not a PEP 508 requirement: Expected")


@pytest.mark.parametrize("read", ["str", "int", "bool", "strs", "table", "tables", "version", "specifier", "marker",
                                  "requirements"])
def test_every_getter_without_a_default_requires_its_key(t, read):
    with pytest.raises(MatrixError, match=r"^matrix/doc.toml: absent: missing$"):
        getattr(t, read)("absent")
    assert getattr(t, read)("absent", None) is None  # the optional variant: `T | None`


def test_nested_keys_carry_their_path(t):
    with pytest.raises(MatrixError, match=r"^matrix/doc.toml: rows\[0\].b: missing"):
        t.tables("rows")[0].int("b")
    with pytest.raises(MatrixError, match=r"sub.extra: unknown key \(expected one of: inner\)"):
        Table({"inner": 1, "extra": 2}, file="matrix/doc.toml", path="sub").only("inner")


def test_unreadable_undecodable_and_invalid_files(tmp_path):
    with pytest.raises(MatrixError, match=r"^gone.toml: cannot read"):
        read_toml(tmp_path / "gone.toml", label="gone.toml")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(MatrixError, match=r"not UTF-8 \(invalid continuation byte at byte 11\)"):
        read_toml(latin)
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n")
    with pytest.raises(MatrixError, match="invalid TOML"):
        read_toml(broken)
