"""docker/compat-build-step.sh: the lock and gate steps the Dockerfiles run, run here.

Two layers. The script's own logic (arguments, declared hardware, exit codes, atomic writes)
is checked against a stand-in `compat` that records its arguments. The real thing, compat
installed by the install step into a fresh venv, is then locked and gated for declared
hardware, with no GPU, no nvidia-smi, or a hanging nvidia-smi first on PATH.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docker.dockerstep import StepResult, clean_env, run_step, write_tool

HARDWARE = {"GPUS": "8xH100", "DRIVER": "580.65.06"}

# A stand-in compat: records one argument a line, prints what FAKE_STDOUT says, exits FAKE_RC.
_FAKE_COMPAT = """\
for a in "$@"; do printf '%s\\n' "$a"; done >>"$FAKE_ARGS"
echo --- >>"$FAKE_ARGS"
printf '%s' "${FAKE_STDOUT:-}"
exit "${FAKE_RC:-0}"
"""


def _fake_run(tmp_path: Path, fake_bin: Path, args: list[str], **env: str) -> tuple[StepResult, list[list[str]]]:
    write_tool(fake_bin, "compat", _FAKE_COMPAT)
    record = tmp_path / "compat-args"
    result = run_step(args, clean_env(tmp_path, fake_bin, FAKE_ARGS=str(record), **env), cwd=tmp_path)
    calls: list[list[str]] = []
    if record.exists():
        current: list[str] = []
        for line in record.read_text(encoding="utf-8").splitlines():
            if line == "---":
                calls.append(current)
                current = []
            else:
                current.append(line)
    return result, calls


# --- the script's own logic, against a stand-in compat ------------------------------------


def test_lock_passes_targets_unglobbed_and_the_declared_hardware(tmp_path, fake_bin):
    # A file that the glob trl[vllm] would match: the target must reach compat unexpanded.
    (tmp_path / "trlv").touch()
    result, calls = _fake_run(
        tmp_path, fake_bin, ["lock", "requirements.txt"],
        TARGETS="trl[vllm]  flash-attn", PYTHON_VERSION="3.12", FAKE_STDOUT="torch==2.15.0\n", **HARDWARE,
    )
    assert result.rc == 0, result.output
    assert calls == [[
        "lock", "trl[vllm]", "flash-attn", "--gpus", "8xH100", "--driver", "580.65.06",
        "--format", "requirements", "--python-version", "3.12",
    ]]
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "torch==2.15.0\n"
    assert "locked trl[vllm] flash-attn for 8xH100, driver 580.65.06, Python 3.12" in result.stderr


def test_a_failed_lock_leaves_no_file_and_keeps_the_exit_code(tmp_path, fake_bin):
    (tmp_path / "requirements.txt").write_text("old\n", encoding="utf-8")
    result, _ = _fake_run(
        tmp_path, fake_bin, ["lock", "requirements.txt"], FAKE_RC="1", FAKE_STDOUT="torch==", **HARDWARE
    )
    assert result.rc == 1
    assert "lock failed: no compatible set for trl[vllm] on 8xH100" in result.stderr
    # The old file is neither overwritten by half a lock nor joined by a .partial one.
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "old\n"
    assert not (tmp_path / "requirements.txt.partial").exists()


def test_a_lock_that_cannot_run_is_not_called_unsatisfiable(tmp_path, fake_bin):
    result, _ = _fake_run(tmp_path, fake_bin, ["lock", "requirements.txt"], FAKE_RC="2", **HARDWARE)
    assert result.rc == 2
    assert "lock could not run (exit 2" in result.stderr
    assert "no compatible set" not in result.stderr
    assert not (tmp_path / "requirements.txt").exists()


@pytest.mark.parametrize("missing", ["GPUS", "DRIVER"])
@pytest.mark.parametrize("step", [["lock", "out.txt"], ["gate", "requirements.txt"]])
def test_undeclared_hardware_is_a_usage_error_before_compat_runs(tmp_path, fake_bin, missing, step):
    (tmp_path / "requirements.txt").write_text("torch==2.15.0\n", encoding="utf-8")
    env = {k: v for k, v in HARDWARE.items() if k != missing}
    result, calls = _fake_run(tmp_path, fake_bin, step, **env)
    assert result.rc == 2
    assert f"set {missing}" in result.stderr
    assert calls == []


@pytest.mark.parametrize("doctor_rc, verdict", [(0, "gate passed"), (1, "gate failed"), (2, "gate could not judge")])
def test_gate_judges_the_file_and_passes_the_doctor_exit_code_on(tmp_path, fake_bin, doctor_rc, verdict):
    (tmp_path / "requirements.txt").write_text("torch==2.15.0\n", encoding="utf-8")
    result, calls = _fake_run(
        tmp_path, fake_bin, ["gate", "requirements.txt"], FAKE_RC=str(doctor_rc), FAIL_ON="warning", **HARDWARE
    )
    assert result.rc == doctor_rc
    assert calls == [[
        "doctor", "--gpus", "8xH100", "--driver", "580.65.06", "--fail-on", "warning", "-r", "requirements.txt",
    ]]
    assert verdict in result.stderr


def test_gate_also_judges_the_installed_environment_of_train_python(tmp_path, fake_bin):
    (tmp_path / "requirements.txt").write_text("torch==2.15.0\n", encoding="utf-8")
    train = write_tool(fake_bin, "train-python", 'echo 3.12\n')
    result, calls = _fake_run(
        tmp_path, fake_bin, ["gate", "requirements.txt"], TRAIN_PYTHON=str(train), PYTHON_VERSION="3.12", **HARDWARE
    )
    assert result.rc == 0, result.output
    assert [c[-2:] for c in calls] == [["-r", "requirements.txt"], ["--python", str(train)]]


def test_gate_stops_when_the_image_python_is_not_the_locked_one(tmp_path, fake_bin):
    train = write_tool(fake_bin, "train-python", 'echo 3.10\n')
    result, calls = _fake_run(tmp_path, fake_bin, ["gate"], TRAIN_PYTHON=str(train), PYTHON_VERSION="3.12", **HARDWARE)
    assert result.rc == 2
    assert "Python 3.10 but the set was locked for PYTHON_VERSION=3.12" in result.stderr
    assert calls == []


@pytest.mark.parametrize("args, message", [
    (["gate"], "gate needs a requirements file or TRAIN_PYTHON"),
    (["gate", "missing.txt"], "missing.txt: no such requirements file"),
    (["lock"], "lock needs the file to write"),
    (["bake"], "unknown step 'bake'"),
    (["install", "nowhere"], "nowhere: no pyproject.toml"),
])
def test_bad_invocations_say_what_is_wrong(tmp_path, fake_bin, args, message):
    result, calls = _fake_run(tmp_path, fake_bin, args, **HARDWARE)
    assert result.rc == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert calls == []


def test_help_lists_the_steps_and_settings(tmp_path, fake_bin):
    result, _ = _fake_run(tmp_path, fake_bin, ["--help"])
    assert result.rc == 0
    for word in ("install", "lock OUT", "gate [FILE]", "GPUS", "DRIVER", "TARGETS", "PYTHON_VERSION", "FAIL_ON"):
        assert word in result.stdout


# --- the real compat, installed by the install step into a fresh venv ---------------------


def test_install_step_puts_compat_and_its_matrix_in_the_venv(build_venv, tmp_path):
    import subprocess

    probe = ("import compat, compat.matrix as m; from compat.matrix.compiled import load_shipped; print(compat.__file__); "
             "print(m.shipped_matrix_dir()); print(load_shipped((m.shipped_matrix_dir(),), lambda: None) is not None)")
    proc = subprocess.run(
        [str(build_venv.python), "-c", probe], cwd=tmp_path, env=clean_env(tmp_path, build_venv.bin),
        capture_output=True, text=True, timeout=60,
    )
    module, matrix, compiled = proc.stdout.split()
    root = str(build_venv.root)
    assert module.startswith(root), "the venv imports another compat than the one the step installed"
    assert matrix.startswith(root) and matrix.endswith("_matrix"), "the wheel does not carry the matrix"
    assert compiled == "True", "the wheel does not carry a compiled matrix a first run can read (hatch_build.py)"
    assert "compat 0.1.0" in build_venv.install.stdout
    assert [p.name for p in build_venv.dist.glob("compat-*.whl")], "no wheel left for other images"


def test_a_first_explain_loads_the_automata_the_wheel_ships(build_venv, tmp_path):
    # A fresh image has an empty cache: explain reads the automata the build compiled (hatch_build.py), plain and
    # coloured, instead of compiling them (about a second and a half each), and writes none into the cache.
    import subprocess

    pytest.importorskip("hyperscan")
    log = tmp_path / "failure.log"
    log.write_bytes(b"Traceback (most recent call last):\n  File \"/x/train.py\", line 3, in <module>\n    import torch\n"
                    b"ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n"
                    + b"\x1b[31mERROR\x1b[0m step\n" * 64)
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [str(build_venv.bin / "compat"), "explain", "--no-env", str(log)], cwd=tmp_path,
        env=clean_env(tmp_path, build_venv.bin, COMPAT_CACHE_DIR=str(cache)), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "libcudnn" in proc.stdout
    assert not list(cache.glob("explain/hyperscan-*")), "explain compiled an automaton the wheel should have shipped"


@pytest.fixture(scope="session")
def good_lock(build_venv, tmp_path_factory) -> tuple[StepResult, Path]:
    """What `compat lock "trl[vllm]" --gpus 8xH100 --driver 580.65.06` writes, via the lock step."""
    work = tmp_path_factory.mktemp("lock")
    env = clean_env(work, build_venv.bin, TARGETS="trl[vllm]", PYTHON_VERSION="3.11", **HARDWARE)
    return run_step(["lock", "requirements.txt"], env, cwd=work), work / "requirements.txt"


def _gate(build_venv, tmp_path: Path, requirements: str | Path, *path_first: Path, **hardware: str) -> StepResult:
    req = Path(requirements) if isinstance(requirements, Path) else tmp_path / "requirements.txt"
    if not isinstance(requirements, Path):
        req.write_text(requirements, encoding="utf-8")
    env = clean_env(tmp_path, *path_first, build_venv.bin, **(hardware or HARDWARE))
    return run_step(["gate", str(req)], env, cwd=tmp_path)


def test_lock_step_writes_a_pinned_set(good_lock):
    result, path = good_lock
    assert result.rc == 0, result.output
    pins = path.read_text(encoding="utf-8")
    for name in ("trl", "vllm", "torch"):
        assert re.search(rf"^{name}(\[[^\]]*\])?==\S+", pins, re.MULTILINE), f"no pin for {name}:\n{pins}"


@pytest.mark.parametrize("nvidia_smi", ["absent", "hanging"])
def test_gate_passes_the_locked_set_without_touching_gpu_tools(build_venv, good_lock, tmp_path, fake_bin, nvidia_smi):
    result, path = good_lock
    assert result.rc == 0, result.output
    called = tmp_path / "nvidia-smi-was-called"
    if nvidia_smi == "hanging":
        # First on PATH and never answering: a gate that asks it would hang until the guard.
        write_tool(fake_bin, "nvidia-smi", f'touch "{called}"\nexec sleep 3600\n')
    gate = _gate(build_venv, tmp_path, path, fake_bin)
    assert not called.exists(), "the gate ran nvidia-smi although the GPUs were declared"
    assert gate.rc == 0, gate.output
    assert "gate passed" in gate.stderr
    assert not re.search(r"nvidia-smi|NVML|no GPU", gate.output, re.IGNORECASE), gate.output


_KNOWN_BAD = [
    pytest.param(
        # vllm 0.7.2 requires torch==2.5.1.
        "vllm==0.7.2\ntorch==2.6.0\n", HARDWARE, r"Compiled against torch 2\.5\.1, but torch 2\.6\.0 is installed: vllm 0\.7\.2",
        id="vllm-0.7.2-with-torch-2.6.0",
    ),
    pytest.param(
        # torch 2.5.1 ships no kernels for compute capability 12.0 (Blackwell consumer cards).
        "torch==2.5.1\n", {"GPUS": "1xRTX5090", "DRIVER": "580.65.06"}, r"sm_120|compute capability",
        id="torch-2.5.1-on-rtx5090",
    ),
]


@pytest.mark.parametrize("requirements, hardware, reason", _KNOWN_BAD)
def test_gate_fails_a_known_bad_set_with_the_reason(build_venv, tmp_path, fake_bin, requirements, hardware, reason):
    called = tmp_path / "nvidia-smi-was-called"
    write_tool(fake_bin, "nvidia-smi", f'touch "{called}"\nexec sleep 3600\n')
    gate = _gate(build_venv, tmp_path, requirements, fake_bin, **hardware)
    assert gate.rc == 1, gate.output
    assert "Traceback" not in gate.output, "a crash also exits 1; it is not a finding"
    assert "gate failed" in gate.stderr
    assert "torch" in gate.output and re.search(reason, gate.output, re.IGNORECASE), gate.output
    assert not called.exists()


def _fake_installed_env(root: Path, dists: dict[str, tuple[str, list[str]]]) -> Path:
    """An interpreter whose site-packages holds only metadata: what pip would have installed."""
    import venv

    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(root)
    site = next(root.glob("lib/python3.*/site-packages"))
    for name, (version, requires) in dists.items():
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
        (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    return root / "bin" / "python"


def test_gate_fails_a_bad_installed_environment_like_the_training_image(build_venv, tmp_path, fake_bin):
    # The training image's gate: TRAIN_PYTHON is the venv pip installed the set into.
    train = _fake_installed_env(
        tmp_path / "train", {"vllm": ("0.7.2", ["torch==2.5.1"]), "torch": ("2.6.0", [])}
    )
    called = tmp_path / "nvidia-smi-was-called"
    write_tool(fake_bin, "nvidia-smi", f'touch "{called}"\nexec sleep 3600\n')
    env = clean_env(tmp_path, fake_bin, build_venv.bin, TRAIN_PYTHON=str(train), **HARDWARE)
    gate = run_step(["gate"], env, cwd=tmp_path)
    assert gate.rc == 1, gate.output
    assert "Traceback" not in gate.output, "a crash also exits 1; it is not a finding"
    assert "gate failed: the environment of" in gate.stderr
    assert "vllm" in gate.output and "torch" in gate.output
    assert not called.exists()
