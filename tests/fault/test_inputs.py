"""Bad inputs: special files, deep nesting, huge numbers, wrong JSON types, escapes and secrets.

Every case ends in a one-line error (exit 2), an unknown with a reason, or a clean result: never a
traceback, a hang, a secret on the screen or a control sequence reaching the terminal.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compat.cli._output import terminal_safe
from compat.errors import FactsError
from compat.judge.diagnose import diagnose
from compat.model.facts import Gpu, Hardware, HardwareSource, dump_facts, load_facts
from compat.model.findings import Status
from compat.model.unknown import Unknown
from compat.redact import redact_text, secret_name
from compat.sources.bounds import bound_facts
from compat.sources.probe.launch import kept_env, parse_accelerate_config
from compat.sources.probe.script import parse_script
from tests.fault.fakes import compat_cli, one_line_error
from tests.fault.inputs import (
    ESCAPES,
    SECRET_NAMES,
    SECRET_VALUES,
    facts_with,
    hostile_text,
    json_values,
    replace,
    versions,
)
from tests.support.main import compat_batch, compat_main
from tests.support.matrix import shipped_matrix

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MATRIX = shipped_matrix()  # one per test process (tests/support/matrix.py)
DECLARED = ("--gpus", "1xH100", "--driver", "550.54.15")


@pytest.fixture()
def facts_file(tmp_path):
    path = tmp_path / "facts.json"
    path.write_text(dump_facts(facts_with(torch="2.5.1+cu124")))
    return path


# ------------------------------------------------------------------ special files


FIFO_OPTIONS = ["--facts", "--script", "--accelerate-config", "--requirements", "log", "overlay"]


@pytest.fixture(scope="module")
def fifo_refused(tmp_path_factory):
    """Each option's run on a FIFO, all in one child (tests/support/main.py's `compat_batch`): a run that opened
    the FIFO would block, and the child's timeout bounds that (None: killed at the bound before it ended)."""
    tmp_path = tmp_path_factory.mktemp("fifo")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    facts_file = tmp_path / "facts.json"
    facts_file.write_text(dump_facts(facts_with(torch="2.5.1+cu124")))
    (tmp_path / "overlay" / "signatures").mkdir(parents=True)
    os.mkfifo(tmp_path / "overlay" / "signatures" / "company.toml")
    runs = {
        "--facts": ["doctor", "--facts", str(fifo)],
        "--script": ["doctor", "--facts", str(facts_file), "--script", str(fifo)],
        "--accelerate-config": ["doctor", "--facts", str(facts_file), "--accelerate-config", str(fifo)],
        "--requirements": ["doctor", "-r", str(fifo), *DECLARED],
        "log": ["explain", str(fifo), "--no-env"],
        "overlay": ["doctor", "--facts", str(facts_file), "--matrix", str(tmp_path / "overlay")],
    }
    return dict(zip(FIFO_OPTIONS, compat_batch([runs[o] for o in FIFO_OPTIONS], timeout=60), strict=True))


@pytest.mark.parametrize("option", FIFO_OPTIONS)
def test_a_fifo_is_refused_before_anything_blocks(fifo_refused, option):
    result = fifo_refused[option]
    assert result is not None, "blocked past the bound"
    assert result.returncode == 2, result
    assert re.search(r"FIFO|not a regular file", one_line_error(result))


def test_a_device_is_refused_as_a_facts_file():
    result = compat_cli("doctor", "--facts", "/dev/zero", timeout=30)
    assert result.returncode == 2
    assert "a device, not a regular file" in one_line_error(result)


def test_a_missing_script_exits_2_like_a_missing_accelerate_config(tmp_path, facts_file):
    for option in ("--script", "--accelerate-config"):
        result = compat_main("doctor", "--facts", str(facts_file), option, str(tmp_path / "nope"))
        assert result.returncode == 2
        assert "does not exist" in one_line_error(result)


@pytest.mark.parametrize("name", ["compat.toml", "pylock.toml"])
def test_a_config_or_pylock_nested_past_the_stack_is_a_one_line_error(tmp_path, name):
    path = tmp_path / name
    path.write_text("a = " + "[" * 100_000)
    args = ("--config", str(path), "-r", str(tmp_path / "empty.txt")) if name == "compat.toml" else ("-r", str(path))
    (tmp_path / "empty.txt").write_text("")
    result = compat_cli("doctor", *args, timeout=60)
    assert result.returncode == 2, result.stderr[-300:]
    assert f"{path}: not" in one_line_error(result) and "nested too deeply" in one_line_error(result)


@pytest.mark.parametrize("found", [False, True])
@pytest.mark.parametrize("command", [
    ["explain", "LOG", "--no-env"], ["explain", "LOG"], ["doctor", "--gpus", "cpu"], ["plan"], ["report", "--gpus", "cpu"],
])
def test_a_broken_config_is_the_same_one_line_error_in_every_command(tmp_path, monkeypatch, command, found):
    # explain --no-env used to skip even a config named with --config, so a broken one passed there alone.
    (tmp_path / "compat.toml").write_text("this is [ not toml\n")
    (tmp_path / "train.log").write_text("Traceback (most recent call last):\nRuntimeError: CUDA error\n")
    monkeypatch.chdir(tmp_path)
    args = ["train.log" if a == "LOG" else a for a in command] + ([] if found else ["--config", "compat.toml"])
    result = compat_main(*args)
    if found and "--no-env" in command:
        # --no-env reads no config it was not given: the log alone, at the cost of no config file search and parse,
        # and a broken project file elsewhere does not stand between a user and a pasted log's answer.
        assert result.returncode in (0, 1) and b"compat.toml" not in result.stderr, result
        return
    assert result.returncode == 2, result
    assert "compat.toml: not TOML: Expected '='" in one_line_error(result)


def test_a_fifo_or_a_directory_as_the_config_is_refused_before_anything_blocks(tmp_path):
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "dir.toml").mkdir()
    (tmp_path / "empty.txt").write_text("")
    for name, says in (("fifo.toml", "FIFO"), ("dir.toml", "a directory")):
        result = compat_cli("doctor", "--config", str(tmp_path / name), "-r", str(tmp_path / "empty.txt"), timeout=30)
        assert result.returncode == 2, result.stderr[-300:]
        assert says in one_line_error(result)


@pytest.mark.parametrize("args", [("matrix", "show", "a" * 300), ("matrix", "api", "a" * 300), ("matrix", "show", "/etc/hostname")])
def test_a_package_name_no_file_can_have_is_a_one_line_error(args):
    # the name was joined to matrix/releases/ as it was: past NAME_MAX it was exit 3, an absolute one left the matrix
    result = compat_main(*args)
    assert result.returncode == 2, result.stderr[-300:]
    assert re.search(r"no releases recorded|not a package name", one_line_error(result))


@pytest.mark.parametrize("name", ["", "   ", "\t"])
def test_an_empty_api_name_is_a_one_line_error_not_an_answer(name):
    # it answered "transformers:  [name]: in no indexed release" with exit 0, as if a name had been looked up
    result = compat_main("matrix", "api", "transformers", name)
    assert result.returncode == 2, result.stdout[-300:]
    assert one_line_error(result).startswith("compat: error: NAME is empty")


def test_a_name_that_is_no_project_name_has_no_matrix_file(tmp_path):
    from compat.matrix.releases import ReleaseIndex, file_stem

    (tmp_path / "evil.toml").write_text("garbage = [")
    assert file_stem("Flash_Attn") == "flash-attn"
    assert file_stem(str(tmp_path / "evil")) is None and file_stem("a" * 201) is None
    assert ReleaseIndex((tmp_path / "releases",)).get(str(tmp_path / "evil")) is None


@pytest.mark.parametrize("fault", ["deep-meta", "deep-table", "bomb"])
def test_an_overlays_hostile_api_index_is_a_one_line_error_naming_its_own_file(tmp_path, fault):
    import gzip
    import shutil

    from compat.matrix import shipped_matrix_dir

    index = tmp_path / "overlay" / "api" / "trl"
    index.mkdir(parents=True)
    shutil.copy(shipped_matrix_dir() / "api" / "trl" / "releases.json", index / "releases.json")
    if fault == "deep-meta":
        (index / "releases.json").write_text("[" * 100_000)
    elif fault == "deep-table":
        (index / "name.json.gz").write_bytes(gzip.compress(b"[" * 100_000))
    else:
        (index / "name.json.gz").write_bytes(gzip.compress(b" " * (80 * 1024 * 1024)))
    result = compat_main("matrix", "api", "trl", "top_k_top_p_filtering", "--matrix", str(tmp_path / "overlay"))
    assert result.returncode == 2, result.stderr[-300:]
    line = one_line_error(result)
    assert str(index) in line and "unreadable" in line  # the overlay's file, not the shipped matrix/api/...


# ------------------------------------------------------------------ facts files


@FAST
@given(extra=st.dictionaries(st.sampled_from(["python", "packages", "torch", "hardware", "launch", "script", "x"]),
                             json_values, max_size=3))
def test_facts_of_any_json_shape_are_a_facts_error_or_facts(extra):
    doc = json.loads(dump_facts(facts_with()))
    doc.update(extra)
    try:
        load_facts(json.dumps(doc))
    except FactsError:
        pass


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000, "1" * 100_000, "\x00"])
def test_deep_or_huge_json_is_a_facts_error(text):
    with pytest.raises(FactsError):
        load_facts(text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # diagnose is the slow part
@given(package=versions, torch=versions, driver=versions, cc=versions, cuda=versions)
def test_hostile_versions_end_in_a_facts_error_or_a_verdict(package, torch, driver, cc, cuda):
    hw = Hardware(source=HardwareSource.NVML, driver=driver, driver_cuda=cuda,
                  gpus=(Gpu(index=0, name="NVIDIA H100 80GB HBM3", compute_capability=cc, memory_mib=81559, bus_id="0"),),
                  links=())
    facts = facts_with(packages={"trl": package, "vllm": "0.7.2", "torch": torch}, torch=torch, hardware=hw)
    try:
        bounded = bound_facts(facts, origin="f.json")
    except FactsError as exc:
        assert "is not a version compat can compare" in str(exc)
        return
    diagnose(bounded, MATRIX)


def test_an_unreadable_driver_cannot_be_checked_not_passed(tmp_path):
    hw = Hardware(source=HardwareSource.NVIDIA_SMI, driver="5x0.abc", driver_cuda="12.4",
                  gpus=(Gpu(index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_mib=81559, bus_id="0"),),
                  links=())
    path = tmp_path / "facts.json"
    path.write_text(dump_facts(facts_with(torch="2.5.1+cu124", hardware=hw)))
    from compat import api

    result = api.doctor(api.DoctorRequest(environment=api.Environment(facts_file=path)))
    driver = next(f for f in result.findings if f.id == "cuda-driver-too-old")
    assert driver.status is Status.CANNOT_CHECK
    doctor = compat_main("doctor", "--facts", str(path))
    assert b"the driver version '5x0.abc' cannot be read" in doctor.stdout
    # lock reads the same facts the same way: it names the unreadable driver and checks no CUDA build against it.
    locked = compat_main("lock", "vllm==0.7.2", "--facts", str(path))
    assert b"driver unknown (the driver version '5x0.abc' cannot be read)" in locked.stdout


# ------------------------------------------------------------------ scripts, configs, logs


@FAST
@given(source=st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_any_script_text_gives_script_facts(source):
    parse_script(source, path="train.py")


@pytest.mark.parametrize("source", [
    "x = a" + ".b" * 100_000, "x = " + "not " * 100_000 + "y", "x = " + "(" * 100_000 + ")" * 100_000,
    "f(" * 5000 + ")" * 5000, "x = " + "[" * 300 + "]" * 300,
], ids=["attributes", "nots", "parentheses", "calls", "lists"])
def test_deeply_nested_scripts_give_a_parse_error(source):
    assert parse_script(source, path="deep.py").parse_error is not None


@FAST
@given(text=st.one_of(st.text(max_size=200), json_values.map(json.dumps)))
def test_any_accelerate_config_text_gives_a_config_or_an_unknown(text):
    parse_accelerate_config(text, path="c.yaml")


def test_a_deep_accelerate_config_is_an_unknown():
    assert isinstance(parse_accelerate_config("[" * 100_000, path="c.yaml"), Unknown)
    assert isinstance(parse_accelerate_config("{" + '"a":{' * 100_000, path="c.json"), Unknown)


@FAST
@given(lines=st.lists(st.one_of(hostile_text, st.binary(max_size=80)), max_size=8))
def test_any_log_is_explained_without_a_traceback(lines):
    from compat.explain.match import explain

    explain(lines, MATRIX)


# ------------------------------------------------------------------ the terminal


@FAST
@given(text=hostile_text)
def test_no_control_sequence_survives(text):
    clean = terminal_safe(text)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", clean)
    coloured = terminal_safe(text, keep_colour=True)
    assert re.sub(r"\x1b\[[0-9;:]*m", "", coloured) == terminal_safe(coloured)
    assert not re.search(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]", coloured)


@pytest.mark.parametrize("escape", ESCAPES.wrapped_strategy.elements if hasattr(ESCAPES, "wrapped_strategy")
                         else ESCAPES.elements)
def test_explain_never_echoes_a_control_sequence_from_a_log_line(tmp_path, escape):
    line = (LOGS / "cuda-driver-too-old.log").read_text().splitlines()[0]
    log = tmp_path / "x.log"
    log.write_text(f"{escape}{line} {escape}tail\n")
    result = compat_main("explain", str(log), "--no-env")
    assert result.returncode == 0
    assert b"cuda-driver-too-old" in result.stdout
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", result.stdout)
    assert "\x9b" not in result.stdout.decode() and "\x9d" not in result.stdout.decode()


def test_package_names_with_escapes_do_not_reach_the_terminal(tmp_path):
    facts = facts_with(packages={"trl\x1b]0;pwned\x07": "0.15.2", "vllm": "0.6.6"})
    path = tmp_path / "f.json"
    path.write_text(dump_facts(facts))
    for args in (("doctor", "--facts", str(path)), ("facts", "--facts", str(path))):
        result = compat_main(*args)
        assert result.returncode in (0, 1), result
        assert b"\x1b]" not in result.stdout and b"\x07" not in result.stdout


# ------------------------------------------------------------------ secrets


@FAST
@given(name=SECRET_NAMES, value=SECRET_VALUES)
def test_secrets_by_name_or_by_value_never_reach_the_facts(name, value):
    kept = kept_env({name: "plain", "NCCL_DEBUG_FILE": value, "VLLM_HOST": "h", "NCCL_IB_PKEY": "0x8001"})
    assert name not in kept
    assert value not in json.dumps(kept)
    assert kept["NCCL_IB_PKEY"] == "0x8001" and kept["VLLM_HOST"] == "h"


@FAST
@given(value=SECRET_VALUES, before=st.text(max_size=20), after=st.text(max_size=20))
def test_secret_values_are_masked_inside_any_text(value, before, after):
    # For a URL the secret is the user:password part (the password alone may be a word the rest contains).
    secret = value.split("://", 1)[1].split("@")[0] + "@" if "://" in value else value
    assert secret not in redact_text(f"{before} {value} {after}")


@pytest.mark.parametrize("name, secret", [
    ("VLLM_API_PASS", True), ("NCCL_PW", True), ("ACCELERATE_HUB_PAT", True), ("HF_TOKEN", True),
    ("NCCL_IB_PKEY", False), ("LD_LIBRARY_PATH", False), ("NCCL_BYPASS_X", False), ("TORCH_CUDA_ARCH_LIST", False),
])
def test_secret_names(name, secret):
    assert secret_name(name) is secret


def test_credentials_in_a_requirement_or_the_environment_are_never_printed(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("vllm @ https://alice:s3cr3t-pw@pkgs.example/vllm-0.7.2.whl\n")
    env = {"NCCL_DEBUG_SUBSYS": "https://bob:hunter22@proxy.example:3128", "VLLM_API_PASS": "hunter33",
           "TORCH_TOKEN_FILE": "hf_" + "a1B2" * 9}
    for args in (("doctor", "-r", str(req), *DECLARED), ("facts", *DECLARED)):
        result = compat_main(*args, env=env)
        out = result.stdout + result.stderr
        for secret in (b"s3cr3t-pw", b"hunter22", b"hunter33", b"a1B2a1B2"):
            assert secret not in out, (args, out[-400:])
        assert b"Traceback" not in out


# ------------------------------------------------------------------ exit codes


def test_a_crash_of_compat_exits_3_with_one_line(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, compat.api as a\n"
        "def boom(request):\n"
        "    raise KeyError('a bug')\n"
        "a.doctor = boom\n"
        "sys.argv = ['compat', 'doctor', '--gpus', 'cpu']\n"
        "from compat.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "COMPAT_NO_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, env=env)
    assert result.returncode == 3
    line = one_line_error(result)
    assert line.startswith("compat: internal error: KeyError: 'a bug' at ") and "a bug in compat" in line


@pytest.mark.parametrize("how", [["--debug"], "COMPAT_DEBUG"])
def test_debug_prints_the_traceback_of_a_crash_before_its_one_line(how):
    import subprocess
    import sys

    args = ["--debug", "doctor", "--gpus", "cpu"] if how == ["--debug"] else ["doctor", "--gpus", "cpu"]
    code = (
        "import sys, compat.api as a\n"
        "def boom(request):\n"
        "    raise KeyError('a bug')\n"
        "a.doctor = boom\n"
        f"sys.argv = ['compat', *{args!r}]\n"
        "from compat.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "COMPAT_NO_CACHE": "1"}
    env.pop("COMPAT_DEBUG", None)
    if how == "COMPAT_DEBUG":
        env["COMPAT_DEBUG"] = "1"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, env=env, text=True)
    assert result.returncode == 3
    assert "Traceback (most recent call last):" in result.stderr and "in boom" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("compat: internal error: KeyError: 'a bug' at ")


def test_a_recursion_error_anywhere_is_an_internal_error_not_a_verdict():
    import subprocess
    import sys

    code = (
        "import sys, compat.api as a\n"
        "def deep(request):\n"
        "    return deep(request)\n"
        "a.facts = deep\n"
        "sys.argv = ['compat', 'facts', '--gpus', 'cpu']\n"
        "from compat.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "COMPAT_NO_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, env=env)
    assert result.returncode == 3
    assert "RecursionError" in one_line_error(result)


HUGE = "1" * 5000


@pytest.mark.parametrize("args", [
    ("lock", f"vllm=={HUGE}", "--gpus", "1xH100", "--driver", "550.54.15", "--python-version", "3.11"),
    ("lock", "vllm", "--gpus", "1xH100", "--driver", "550.54.15", "--python-version", HUGE),
    ("matrix", "show", "vllm", "--since", HUGE),
    ("doctor", "--facts", "FACTS", "--gpus", f"{HUGE}xH100", "--driver", "550.54.15"),
    ("doctor", "--facts", "FACTS", "--gpus", "1xH100", "--driver", f"{HUGE}.1"),
], ids=["target", "python-version", "since", "gpu-count", "driver"])
def test_huge_numbers_on_the_command_line_are_one_line_usage_errors(args, facts_file):
    result = compat_main(*(str(facts_file) if a == "FACTS" else a for a in args))
    assert result.returncode == 2, result.stderr[-300:]
    one_line_error(result)


def test_credentials_in_a_url_requirement_never_reach_the_facts():
    from compat.model.facts import Distribution

    facts = facts_with()
    dist = Distribution(name="mylib", version="1.0", requires=("vllm @ https://carol:t0ps3cret@pkgs.example/vllm.whl",))
    bounded = bound_facts(replace(facts, packages=(*facts.packages, dist)), origin="probe")
    assert "t0ps3cret" not in dump_facts(bounded)
    assert "https://***@pkgs.example/vllm.whl" in dump_facts(bounded)


def test_main_turns_a_crash_into_exit_3_and_filters_every_write(monkeypatch, capsys):
    import sys

    from compat import api
    from compat.cli import main

    def boom(request: object) -> None:
        raise RuntimeError("broken \x1b]0;title\x07 at https://u:hunter2@h.example/x")

    monkeypatch.setattr(api, "facts", boom)
    monkeypatch.setattr(sys, "argv", ["compat", "facts", "--gpus", "cpu"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 3
    err = capsys.readouterr().err
    assert err.startswith("compat: internal error: RuntimeError: broken  at https://***@h.example/x at compat/")
    assert re.search(r" at compat/cli/\w+\.py:\d+ in facts_command \(a bug in compat", err)  # compat's innermost frame
    assert "\x1b" not in err and "hunter2" not in err and err.count("\n") == 1
