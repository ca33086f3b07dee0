"""doctor judges the environment the user means: the activated one, the python on PATH next to an
isolated compat install, the user site as the interpreter sees it; and an extra's ranges apply
when its packages are installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.model.facts import Chosen
from compat.sources.probe.selection import Own, choose_interpreter, environment_python, is_isolated
from tests.support.fakeenv import make_env, write_dist
from tests.support.paths import ROOT


def _env_dir(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("", encoding="utf-8")
    return root


def test_an_environment_directory_names_its_interpreter(tmp_path):
    env = _env_dir(tmp_path / "venv")
    own = Own(executable=Path("/opt/compat/bin/python"), isolated=False)
    chosen = choose_interpreter(env, environ={}, own=own, on_path=None)
    assert (chosen.python, chosen.chosen) == (env / "bin" / "python", Chosen.OPTION)
    with pytest.raises(UsageError, match="without bin/python"):
        choose_interpreter(tmp_path, environ={}, own=own, on_path=None)
    assert environment_python(tmp_path) is None


def test_the_activated_environment_comes_first_and_a_stale_variable_is_passed_over(tmp_path):
    venv_dir, conda = _env_dir(tmp_path / "venv"), _env_dir(tmp_path / "conda")
    own = Own(executable=Path("/opt/compat/bin/python"), isolated=True)
    both = {"VIRTUAL_ENV": str(venv_dir), "CONDA_PREFIX": str(conda)}
    assert choose_interpreter(None, environ=both, own=own, on_path=None).chosen is Chosen.VIRTUAL_ENV
    stale = {"VIRTUAL_ENV": str(tmp_path / "removed"), "CONDA_PREFIX": str(conda)}
    picked = choose_interpreter(None, environ=stale, own=own, on_path=None)
    assert (picked.python, picked.chosen) == (conda / "bin" / "python", Chosen.CONDA)


def test_the_python_on_path_only_when_compat_is_isolated_and_it_is_another_one():
    on_path = Path("/opt/venv/bin/python")
    isolated = Own(executable=Path("/opt/compat/bin/python"), isolated=True)
    assert choose_interpreter(None, environ={}, own=isolated, on_path=on_path).chosen is Chosen.PATH
    assert choose_interpreter(None, environ={}, own=isolated, on_path=Path("/opt/compat/bin/python")).chosen is Chosen.OWN
    shared = Own(executable=Path("/usr/bin/python3"), isolated=False)
    assert choose_interpreter(None, environ={}, own=shared, on_path=on_path).python == Path("/usr/bin/python3")


def test_what_counts_as_an_isolated_install(tmp_path):
    base = tmp_path / "base"
    tool = tmp_path / "tool"
    site = tool / "lib" / "site-packages"
    site.mkdir(parents=True)
    assert is_isolated(tool, base, site)  # a venv without torch: made for a tool
    (site / "torch-2.6.0.dist-info").mkdir()
    assert not is_isolated(tool, base, site)  # a training venv that happens to hold compat
    (tool / "uv-receipt.toml").write_text("", encoding="utf-8")
    assert is_isolated(tool, base, site)
    assert not is_isolated(base, base, base / "lib")  # a system interpreter


# ------------------------------------------------------------------ end to end, in a child process


def _tool_install(root: Path) -> Path:
    """compat "installed" with pipx: its own venv, which sees compat and its dependencies only
    through a .pth file (the way a venv sees the packages installed into it)."""
    venv.create(root, with_pip=False, symlinks=True)
    site = next(root.glob("lib/python*/site-packages"))
    paths = [str(ROOT)] + [p for p in sys.path if p and Path(p).is_dir()]
    (site / "_compat_deps.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
    (root / "pipx_metadata.json").write_text("{}", encoding="utf-8")
    return root / "bin" / "python"


def _doctor(python: Path, *args: str, env: dict[str, str]) -> tuple[int, dict]:
    proc = subprocess.run([str(python), "-m", "compat", "doctor", "--json", "--gpus", "cpu", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONUSERBASE")}
    env["COMPAT_CACHE_DIR"] = os.environ["COMPAT_CACHE_DIR"]  # the run's private cache: a cold child parses the whole matrix
    return {**env, **extra}


def _found(report: dict, fid: str) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == fid and f["status"] == "found"]


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    return _tool_install(tmp_path_factory.mktemp("pipx") / "compat")


@pytest.fixture(scope="module")
def training(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("train") / "venv"
    make_env(root, {"trl": "0.15.2", "vllm": "0.6.6"})
    return root


def test_an_isolated_compat_judges_the_activated_venv(tool, training):
    env = _clean_env(VIRTUAL_ENV=str(training), PATH=f"{training / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    _, report = _doctor(tool, env=env)
    python = report["facts"]["python"]
    assert python["executable"].startswith(str(training)) and python["chosen"] == "virtual-env"
    # trl 0.15.2's [vllm] extra pins vllm==0.7.2: with vLLM installed but trl[vllm] named nowhere, shown at info
    (extra,) = _found(report, "unsatisfied-extra-requirement")
    assert extra["title"] == "trl 0.15.2 [vllm] requires vllm==0.7.2, but vllm 0.6.6 is installed"
    assert extra["fix"]["requires"] == ["vllm==0.7.2"]
    assert extra["severity"] == "info"


def test_an_isolated_compat_without_an_activated_venv_judges_the_python_on_path(tool, training):
    env = _clean_env(PATH=f"{training / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    _, report = _doctor(tool, env=env)
    python = report["facts"]["python"]
    assert python["executable"].startswith(str(training)) and python["chosen"] == "path"


def test_the_first_line_says_which_interpreter_and_why(tool, training):
    env = _clean_env(VIRTUAL_ENV=str(training))
    proc = subprocess.run([str(tool), "-m", "compat", "doctor", "--gpus", "cpu"], capture_output=True, text=True,
                          env=env, timeout=120)
    first = proc.stdout.splitlines()[0]
    assert first == f"Judging {training / 'bin' / 'python'} (the activated virtual environment, $VIRTUAL_ENV)"


def test_a_user_site_install_is_seen_and_flagged(tmp_path):
    # An interpreter with a user site (a venv hides it unless it sees the system site), named by its directory.
    target = tmp_path / "py"
    venv.create(target, with_pip=False, symlinks=True, system_site_packages=True)
    userbase = tmp_path / "userbase"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    user_site = userbase / "lib" / version / "site-packages"
    write_dist(user_site, "trl", "0.15.2")
    write_dist(user_site, "vllm", "0.7.0")
    _, report = _doctor(Path(sys.executable), "--python", str(target), env=_clean_env(PYTHONUSERBASE=str(userbase)))
    versions = {d["name"]: d["version"] for d in report["facts"]["packages"]}
    assert versions["trl"] == "0.15.2" and versions["vllm"] == "0.7.0"
    # (the system site this interpreter also sees may hold other packages with extras of their own)
    titles = [f["title"] for f in _found(report, "unsatisfied-extra-requirement")]
    assert "trl 0.15.2 [vllm] requires vllm==0.7.2, but vllm 0.7.0 is installed" in titles
    assert report["facts"]["python"]["chosen"] == "option"


def test_a_python_on_path_that_does_not_run_falls_back_to_compats_own(tool, tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "python").write_text("#!/bin/sh\necho 'pyenv: python: command not found' >&2\nexit 127\n", encoding="utf-8")
    (shim / "python").chmod(0o755)
    _, report = _doctor(tool, env=_clean_env(PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"))
    assert report["facts"]["python"]["chosen"] == "own"
    assert report["facts"]["python"]["executable"].startswith(str(tool.parent.parent))
