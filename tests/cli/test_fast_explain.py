"""`compat explain` on plain arguments is read without typer (compat.cli._fast_explain): the same bytes out, the same
exit code and the same errors as typer's reading, and typer's reading wherever the arguments are not plain."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.startup import LOG
from compat.cli import _fast_explain
from compat.cli._fast_explain import _Typer, parse
from tests.support.paths import LOGS

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import sys
import compat.entry
sys.argv = ["compat", *sys.argv[2:]]
compat.entry.ONLY = sys.argv[1] if sys.argv[1:] and sys.argv[1] == "explain" and {fast} else None
from compat.cli import main
try:
    main()
finally:
    sys.stdout = sys.__stdout__
    sys.stdout.flush()
    print("TYPER:" + str("typer" in sys.modules), file=sys.__stderr__)
"""


def _compat(tmp: Path, fast: bool, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> tuple[int, str, str, bool]:
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    environ.update(PYTHONPATH=str(ROOT), COMPAT_CACHE_DIR=str(tmp / "cache"), **(env or {}))
    done = subprocess.run([sys.executable, "-c", _CHILD.format(fast=fast), "-", *args], input=stdin, capture_output=True,
                          text=True, cwd=tmp, env=environ, timeout=120, check=False)
    err, _, typer = done.stderr.rpartition("TYPER:")
    return done.returncode, done.stdout, err, typer.strip() == "True"


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    where = tmp_path_factory.mktemp("fast")
    (where / "small.log").write_text(LOG)
    _compat(where, True, "explain", "--no-env", "small.log")  # the first run compiles the matrix into the cache
    return where


CASES = [
    (("explain", "small.log"), True),
    (("explain", "--no-env", "--json", "small.log"), True),
    (("explain", "--no-env", "--format=markdown", "--top", "1", "small.log"), True),
    (("explain", "--no-env", str(LOGS / "negative" / "dataset-keyerror.log")), True),  # nothing known: exit 1
    (("explain", "--json", "--format", "text", "--no-env", "small.log"), True),  # compat's own usage error
    (("explain", "--no-env", "absent.log"), True),
    (("explain", "--no-env", "--facts", "absent.json", "small.log"), True),
    (("explain", "--no-env", "--offline", "--index-budget=0", "--no-config", "-"), True),
    (("explain", "--no-env", "--top", "0", "small.log"), False),  # typer's range error
    (("explain", "--no-env", "--format", "yaml", "small.log"), False),
    (("explain", "--no-env", "small.log", "--no-env"), False),
    (("explain", "--help"), False),
    (("explain", "--no-env", "--", "small.log"), False),
]


@pytest.mark.parametrize(("args", "plain"), CASES, ids=[" ".join(a[1:]) for a, _ in CASES])
def test_the_same_answer_with_or_without_typer(tmp, args, plain):
    fast = _compat(tmp, True, *args, stdin=LOG)
    assert fast[3] is not plain  # typer imported exactly where the arguments are not plain
    assert fast[:3] == _compat(tmp, False, *args, stdin=LOG)[:3]
    assert fast[0] in (0, 1, 2), fast


def test_the_output_file_is_the_same(tmp):
    fast, slow = _compat(tmp, True, "explain", "--no-env", "-o", "fast.txt", "small.log"), _compat(
        tmp, False, "explain", "--no-env", "-o", "slow.txt", "small.log")
    assert fast[:3] == slow[:3] and not fast[3]
    assert (tmp / "fast.txt").read_text() == (tmp / "slow.txt").read_text() != ""


def test_compat_matrix_in_the_environment_is_typer_s_to_read(tmp):
    assert _compat(tmp, True, "explain", "--no-env", "small.log", env={"COMPAT_MATRIX": str(tmp / "none")})[3]


@pytest.mark.parametrize("args", [
    ["--help"], ["-h"], ["--top", "0"], ["--top", "x"], ["--top"], ["--index-budget", "601"], ["--index-budget", "1e1"],
    ["-o"], ["-ofile"], ["-o=file"], ["--matrix", "dir"], ["--no-env=1"], ["--"], ["--format", "JSON"],
    ["--config", ""], ["--gpus", "-x"], ["a.log", "b.log"], ["--json", "--json"], ["--debug"], [""],
])
def test_anything_but_plain_arguments_is_left_to_typer(args):
    with pytest.raises(_Typer):
        parse(args)


def test_plain_arguments_are_read_as_typer_reads_them():
    assert parse(["--top", "3", "--index-budget=2.5", "-o", "out", "--gpus", "8xH100", "-", "--no-env"]) == {
        "top": 3, "index_budget": 2.5, "output": Path("out"), "gpus": "8xH100", "log": "-", "no_env": True}
    assert parse([]) == {}
    assert set(_fast_explain.VALUES.values()) | set(_fast_explain.FLAGS.values()) >= _fast_explain.PATHS


def test_every_option_of_the_command_but_the_list_is_read_here():
    import typer.main

    from compat.cli import app

    command = typer.main.get_command(app).commands["explain"]  # type: ignore[attr-defined]
    options = {o for p in command.params if p.param_type_name == "option" for o in p.opts}
    assert options - {"--matrix", "--help"} == set(_fast_explain.VALUES) | set(_fast_explain.FLAGS)
