"""The interpreter, its packages and the torch build, read from fake virtual environments."""

import shutil
import sys
import venv
from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.model.facts import Distribution, TorchSource
from compat.model.unknown import Unknown
from compat.sources.probe._run import Outcome, RunResult
from compat.sources.probe.interpreter import fetch_interpreter
from compat.sources.probe.torch import (
    IMPORT_TIMEOUT,
    MAX_IMPORT_TIMEOUT,
    bound_for_startup,
    cuda_of_version,
    fetch_torch_import,
    import_bound,
    parse_torch,
)
from tests.sources.probe.probe_fakes import DATA

ENV_DISTS = {"torch": "2.5.1+cu124", "transformers": "4.51.3", "trl": "0.15.2", "vllm": "0.7.2"}


def _site_packages(root: Path) -> Path:
    return next((root / "lib").glob("python3*/site-packages"))


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venv")
    venv.create(root, with_pip=False, symlinks=True)
    site = _site_packages(root)
    for folder in (DATA / "envs").glob("*.dist-info"):
        shutil.copytree(folder, site / folder.name)
    (site / "broken-1.0.dist-info").mkdir()  # no METADATA at all
    garbled = site / "garbled-2.0.dist-info"
    garbled.mkdir()
    (garbled / "METADATA").write_bytes(b"\xff\xfe\x00garbage")
    return root


def _python(root: Path) -> Path:
    return root / "bin" / "python"


def test_another_interpreter_lists_exactly_its_distributions(env):
    i = fetch_interpreter(_python(env), timeout=30)
    py, dists, broken = i.python, i.distributions, i.broken
    assert {d.name: d.version for d in dists} == ENV_DISTS
    assert [d.name for d in dists] == sorted(ENV_DISTS)
    assert len(broken) == 2
    trl = next(d for d in dists if d.name == "trl")
    assert 'vllm==0.7.2; sys_platform != "win32" and extra == "vllm"' in trl.requires
    assert trl.installer == "pip"
    assert py.version == ".".join(map(str, sys.version_info[:3]))
    assert py.markers["python_version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert py.markers["sys_platform"] == sys.platform
    assert str(py.executable).startswith(str(env))


def test_marker_environment_matches_packaging():
    from packaging.markers import default_environment

    py = fetch_interpreter(Path(sys.executable), timeout=30).python
    assert py.markers == default_environment()


def test_missing_interpreter_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        fetch_interpreter(tmp_path / "nope" / "python", timeout=5)


def test_not_a_python_is_a_usage_error(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    with pytest.raises(UsageError, match="cannot inspect"):
        fetch_interpreter(fake, timeout=5)


# ---------------------------------------------------------------- torch


def _torch_dist(env):
    dists = fetch_interpreter(_python(env), timeout=30).distributions
    return next(d for d in dists if d.name == "torch")


def _fake_torch(env, body: str) -> None:
    pkg = _site_packages(env) / "torch"
    shutil.rmtree(pkg, ignore_errors=True)
    pkg.mkdir()
    (pkg / "__init__.py").write_text((DATA / "torch" / body).read_text())


def test_undefined_symbol_falls_back_to_metadata(env):
    _fake_torch(env, "undefined_symbol.py")
    build = parse_torch(fetch_torch_import(_python(env), timeout=30), _torch_dist(env), None)
    assert build.source is TorchSource.METADATA
    assert build.version == "2.5.1+cu124"
    assert build.cuda == "12.4"
    assert build.import_error.startswith("ImportError: ")
    assert "libtorch_cuda.so: undefined symbol: ncclCommRegister" in build.import_error
    assert isinstance(build.nccl, Unknown) and isinstance(build.arch_list, Unknown)


def test_segfault_on_import_is_recorded(env):
    _fake_torch(env, "segfault.py")
    build = parse_torch(fetch_torch_import(_python(env), timeout=30), _torch_dist(env), None)
    assert build.source is TorchSource.METADATA
    assert build.import_error == "import torch was killed by SIGSEGV"


def test_hanging_import_times_out(env):
    _fake_torch(env, "hang.py")
    result = fetch_torch_import(_python(env), timeout=1)
    assert result.outcome is Outcome.TIMED_OUT and result.timed_out_after == 1
    build = parse_torch(result, _torch_dist(env), None)
    assert build.source is TorchSource.METADATA
    # a slow import is not a failed one: whether torch imports is unknown, with the bound used
    assert isinstance(build.import_error, Unknown)
    assert build.import_error.reason.startswith("import torch did not finish within 1 s")
    assert "COMPAT_TORCH_TIMEOUT" in build.import_error.reason
    assert build.cuda == "12.4"
    from compat.model.codec import decode, encode

    assert encode(build)["import_error"] == {"unknown": build.import_error.reason}  # a snapshot keeps it unknown
    assert decode(type(build), encode(build)) == build


def test_a_crash_is_not_a_timeout(env):
    _fake_torch(env, "segfault.py")
    result = fetch_torch_import(_python(env), timeout=30)
    assert result.outcome is Outcome.KILLED and not result.timed_out


def test_the_adaptive_bound_is_measured_on_this_interpreter(env):
    bound = import_bound(_python(env))
    assert IMPORT_TIMEOUT <= bound <= MAX_IMPORT_TIMEOUT
    assert import_bound(_python(env), override=5.0) == 5.0
    assert import_bound(Path("/nonexistent/python")) == IMPORT_TIMEOUT


@pytest.mark.parametrize(("startup", "bound"), [(0.02, 60.0), (0.3, 60.0), (0.6, 120.0), (10.0, 600.0)])
def test_the_bound_grows_with_a_slow_start(startup, bound):
    assert bound_for_startup(startup) == bound


def test_dist_info_without_the_module_uses_metadata(tmp_path):
    root = tmp_path / "distonly"
    venv.create(root, with_pip=False, symlinks=True)
    shutil.copytree(DATA / "envs" / "torch-2.5.1+cu124.dist-info", _site_packages(root) / "torch-2.5.1+cu124.dist-info")
    dist = Distribution(name="torch", version="2.5.1+cu124", requires=())
    build = parse_torch(fetch_torch_import(_python(root), timeout=30), dist, None)
    assert build.source is TorchSource.METADATA and build.cuda == "12.4"
    assert build.import_error is None
    assert "no importable module" in build.cudnn.reason


def test_torch_absent_is_none(tmp_path):
    root = tmp_path / "bare"
    venv.create(root, with_pip=False, symlinks=True)
    assert parse_torch(fetch_torch_import(_python(root), timeout=30), None, None) is None


@pytest.mark.needs_torch
def test_real_cpu_torch_is_imported():
    build = parse_torch(fetch_torch_import(Path(sys.executable), timeout=60), None, None)
    assert build.version == "2.13.0+cpu"
    assert build.cuda is None and build.nccl is None
    assert build.arch_list == ()
    assert isinstance(build.cxx11_abi, bool)
    assert build.source is TorchSource.IMPORT
    assert build.import_error is None


class _Release:
    default_cuda = "12.4"  # what cuda_of_version reads of a release without a local tag


class _Table:
    def __init__(self, release):
        self._release = release

    def release(self, version):
        return self._release


class _Matrix:
    def __init__(self, release):
        self.torch = _Table(release)


@pytest.mark.parametrize("version, matrix, expected", [
    ("2.5.1+cu124", None, "12.4"),
    ("2.7.0+cu128", None, "12.8"),
    ("2.9.0+cu130", None, "13.0"),
    ("2.5.1+cpu", None, None),
    ("2.5.1", _Matrix(_Release()), "12.4"),
])
def test_cuda_of_version(version, matrix, expected):
    assert cuda_of_version(version, matrix) == expected


@pytest.mark.parametrize("matrix", [None, _Matrix(None)])
def test_plain_version_without_matrix_is_unknown(matrix):
    result = cuda_of_version("2.5.1", matrix)
    assert isinstance(result, Unknown) and "2.5.1" in result.reason


def test_garbled_child_output_uses_metadata():
    result = RunResult(argv=("python",), returncode=0, stdout="COMPAT-TORCH:{not json", stderr="")
    build = parse_torch(result, Distribution(name="torch", version="2.5.1+cpu", requires=()), None)
    assert build.source is TorchSource.METADATA and build.cuda is None


# ---------------------------------------------------------------- what the child sees, what it runs


def test_the_child_reads_pythonpath_metadata_but_runs_no_code_from_it_or_the_cwd(env, tmp_path, monkeypatch):
    trap = tmp_path / "trap"
    trap.mkdir()
    for module in ("json", "platform", "re", "sitecustomize"):
        (trap / f"{module}.py").write_text("raise SystemExit('injected')\n", encoding="utf-8")
    (trap / "extra_pkg-1.0.dist-info").mkdir()
    (trap / "extra_pkg-1.0.dist-info" / "METADATA").write_text("Name: extra-pkg\nVersion: 1.0\n", encoding="utf-8")
    monkeypatch.chdir(trap)  # `python -c` puts the current directory first on sys.path
    found = fetch_interpreter(_python(env), timeout=30, environ={"PYTHONPATH": str(trap), "PATH": "/usr/bin:/bin"})
    names = {d.name: d.version for d in found.distributions}
    assert names["extra-pkg"] == "1.0" and names["trl"] == "0.15.2"


def test_the_user_site_is_seen_as_the_interpreter_sees_it(tmp_path):
    root = tmp_path / "sys-site"
    venv.create(root, with_pip=False, symlinks=True, system_site_packages=True)  # a venv hides it otherwise
    userbase = tmp_path / "userbase"
    site = userbase / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "trl-0.15.2.dist-info").mkdir(parents=True)
    (site / "trl-0.15.2.dist-info" / "METADATA").write_text("Name: trl\nVersion: 0.15.2\n", encoding="utf-8")
    seen = fetch_interpreter(_python(root), timeout=30, environ={"PYTHONUSERBASE": str(userbase)})
    assert "trl" in {d.name for d in seen.distributions}
    hidden = fetch_interpreter(_python(root), timeout=30, environ={"PYTHONUSERBASE": str(userbase), "PYTHONNOUSERSITE": "1"})
    assert "trl" not in {d.name for d in hidden.distributions}
