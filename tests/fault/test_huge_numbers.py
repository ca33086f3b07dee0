"""A 5000-digit number wherever a version or integer is read: a one-line error (exit 2) or an
unknown, never an internal error. Python 3.11+ cannot turn such a string into an int, and
packaging's Version tries to; every reader asks compat.version_text first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.explain.versions import stated_versions
from compat.model.facts import dump_facts
from compat.version_text import huge_number, unreadable_version
from tests.fault.fakes import one_line_error
from tests.fault.inputs import facts_with
from tests.support.main import compat_main

HUGE = "9" * 5000
FLEET_FACTS = Path(__file__).resolve().parents[1] / "data" / "fleet" / "h100-8x.json"


@pytest.mark.parametrize("line", [
    f"RuntimeError: requires torch>={HUGE} but found 2.3.1",
    f"RuntimeError: The NVIDIA driver on your system is too old (found version {HUGE})",
    f"ERROR: vllm 0.7.2 requires torch=={HUGE}, but you have torch 2.6.0 which is incompatible.",
    f"ImportError: tokenizers>={HUGE} is required for a normal functioning of this module, but found tokenizers==0.14.1.",
    f"ImportError: built for torch {HUGE}, you have 2.5.1 ",
])
def test_a_huge_version_in_a_log_is_not_a_statement_and_not_a_crash(tmp_path, line):
    assert stated_versions(line) == ()
    log = tmp_path / "train.log"
    log.write_text(line + "\n")
    result = compat_main("explain", str(log), "--facts", str(FLEET_FACTS))
    assert result.returncode in (0, 1), result.stderr[-500:]
    assert b"internal error" not in result.stderr


@pytest.mark.parametrize("line", [f"torch=={HUGE}", f"torch==2.{HUGE}.0", f"vllm=={HUGE}  # pinned"])
def test_a_huge_version_in_a_requirements_file_is_one_line(tmp_path, line):
    req = tmp_path / "requirements.txt"
    req.write_text(line + "\n")
    result = compat_main("doctor", "-r", str(req), "--gpus", "1xH100", "--driver", "550.54.15")
    assert result.returncode == 2, result.stderr[-500:]
    assert "holds a number no version has" in one_line_error(result)


@pytest.mark.parametrize("field", ["package-name", "requirement", "requirement-parenthesised"])
def test_a_huge_number_in_a_facts_file_is_one_line(tmp_path, field):
    doc = json.loads(dump_facts(facts_with(torch="2.5.1+cu124")))
    dist = doc["packages"][0]
    if field == "package-name":
        dist["name"] = HUGE
    else:
        dist["requires"] = [f"torch>={HUGE}" if field == "requirement" else f"torch (>={HUGE})"]
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    result = compat_main("doctor", "--facts", str(facts))
    assert result.returncode == 2, result.stderr[-500:]
    assert str(facts) in one_line_error(result)


def test_the_helpers():
    assert unreadable_version(HUGE) and unreadable_version("1." + "0" * 300) and not unreadable_version("2.5.1+cu124")
    assert huge_number(f"torch>={HUGE}") and not huge_number("torch>=2.5.1,<3")


def test_a_10_mb_requirement_line_is_one_line_and_10k_requirements_are_read(tmp_path):
    long = tmp_path / "long.txt"
    long.write_text("torch==2.5.1 ; " + "python_version > '3' and " * 400_000 + "python_version > '3'\n")
    result = compat_main("doctor", "-r", str(long), "--gpus", "1xH100", "--driver", "550.54.15")
    assert result.returncode == 2, result.stderr[-500:]
    assert "long.txt:1: a line longer than 65536 characters" in one_line_error(result)
    many = tmp_path / "many.txt"
    many.write_text("".join(f"pkg{i}==1.0\n" for i in range(10_000)))
    result = compat_main("doctor", "-r", str(many), "--gpus", "1xH100", "--driver", "550.54.15")
    assert result.returncode == 0, result.stderr[-500:]


HUGE = "9" * 5000
OVERLAYS = {
    "stacks.toml": '[[stack]]\nid = "a"\nproject = "a/b"\nsource = "a/b@abcdef1:x"\ndate = "2025-01-01"\n'
                   f'pins = {{ trl = "{HUGE}", vllm = "0.7.2" }}\n',
    "gpus.toml": f'[[gpu]]\nname = "X"\ncompute_capability = "{HUGE}"\n',
    # an integer literal, not a string: tomllib's int() refuses past 4300 digits with a plain ValueError (was exit 3)
    "cuda.toml": f'x = {HUGE}\n',
    "releases/alpha.toml": f'package = "alpha"\nsource = "x"\n\n[[release]]\nversion = "{HUGE}"\nuploaded = "2025-01-01"\n'
                           'requires_python = ">=3.8"\nrequires = []\n',
}


@pytest.mark.parametrize("name", sorted(OVERLAYS))
def test_a_huge_number_in_an_overlay_file_is_a_one_line_error(tmp_path, name):
    path = tmp_path / "overlay" / name
    path.parent.mkdir(parents=True)
    path.write_text(OVERLAYS[name])
    target = "alpha" if name.startswith("releases") else "trl"
    result = compat_main("lock", target, "--gpus", "cpu", "--python-version", "3.11", "--matrix", str(tmp_path / "overlay"))
    assert result.returncode == 2
    line = one_line_error(result)
    assert line.startswith("compat: error: ") and name.split("/")[-1] in line and len(line) < 400


@pytest.mark.parametrize("name", ["compat.toml", "pylock.toml"])
def test_an_integer_past_ints_digit_limit_in_a_config_or_pylock_is_one_line(tmp_path, name):
    path = tmp_path / name
    path.write_text(f"x = {HUGE}\n")
    (tmp_path / "empty.txt").write_text("")
    args = ("--config", str(path), "-r", str(tmp_path / "empty.txt")) if name == "compat.toml" else ("-r", str(path))
    result = compat_main("doctor", "--gpus", "cpu", *args)
    assert result.returncode == 2, result.stderr[-300:]
    assert f"{path}: not" in one_line_error(result) and "digits" in one_line_error(result)


@pytest.mark.parametrize(("args", "option"), [
    (["smoke", "--budget", value], "--budget") for value in ("inf", "-inf", "nan", "-1", "1e309", "0")
] + [
    (["smoke", "--processes", "99999999999"], "--processes"),
    (["matrix", "refresh", "--timeout", "inf"], "--timeout"),
])
def test_a_time_bound_or_count_out_of_range_is_a_usage_error(args, option):
    # `smoke --budget inf` used to start a smoke run with no bound at all (a hang to a CI job).
    result = compat_main(*args)
    assert result.returncode == 2, result.stderr[-500:]
    assert option in one_line_error(result)
