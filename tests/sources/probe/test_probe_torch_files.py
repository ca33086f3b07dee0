"""torch's build read from its files (torch_files.py) and the loader check that stands in for the import (torch.py)."""

from __future__ import annotations

import shutil
import sys
import venv
from pathlib import Path

import pytest

from compat.model.facts import Distribution, TorchBuild, TorchSource
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult
from compat.sources.probe.interpreter import fetch_interpreter
from compat.sources.probe.torch import LOAD_MARK, fetch_torch_load, parse_torch_load, read_torch
from compat.sources.probe.torch_files import (
    TorchFiles,
    cudnn_number,
    cxx11_abi,
    fetch_torch_files,
    find_arch_flags,
    nccl_text,
    parse_torch_files,
    parse_version_py,
    unsettled,
    xnnpack_enabled,
)
from tests.sources.probe.probe_fakes import DATA

FILES = DATA / "torch" / "files"
CPU = FILES / "2.13.0+cpu"


def _files(version_py: bytes | None, **kw) -> TorchFiles:
    fields = {"directory": "/venv/torch", "version_py": version_py, "cmake": None, "c10": None, "arch_library": None,
              "bundled": (), "shadowing": ()}
    return TorchFiles(**{**fields, **kw})


CUDA_VERSION_PY = b"__version__ = '2.9.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n"
CUDA_REQUIRES = ('nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux"', 'nvidia-nccl-cu12==2.27.3; platform_system == "Linux"')
CUDA_DISTS = (Distribution(name="nvidia-cudnn-cu12", version="9.10.2.21", requires=()),
              Distribution(name="nvidia-nccl-cu12", version="2.27.3", requires=()))
ARCHS = b"\x00other text\x00sm_80 sm_86 sm_90 sm_100 sm_120 compute_120\x00sm_ alone\x00"


# ---------------------------------------------------------------- the CPU torch 2.13.0 of the dev venv (recorded files)


def test_a_cpu_build_is_read_whole_from_its_files():
    files = _files((CPU / "version.py").read_bytes(), cmake=(CPU / "TorchConfig.cmake").read_bytes(),
                   c10=(CPU / "libc10.so.extract").read_bytes())
    build = parse_torch_files(files, packages=(), requires=())
    # What the import reports of the same install (test_probe_env.test_real_cpu_torch_is_imported;
    # torch._C._is_xnnpack_enabled() is False there).
    assert build == TorchBuild(
        version="2.13.0+cpu", cuda=None, cudnn=None, nccl=None, arch_list=(), cxx11_abi=True,
        source=TorchSource.FILES, debug=False, hip=None, xnnpack=False,
    )
    assert unsettled(build) == ()


def test_version_py_literals_annotated_or_not():
    values = parse_version_py((CPU / "version.py").read_bytes())
    assert values["__version__"] == "2.13.0+cpu" and values["cuda"] is None and values["debug"] is False
    assert values["git_version"] == "cf30153c4c131c8164ee7798e5022d810682e2cb"
    assert parse_version_py(b"cuda = compute()\n__version__ = '1'\n") == {"__version__": "1"}
    assert parse_version_py(b"def (:\n") == {}


def test_no_version_py_is_unknown_with_the_read_error():
    build = parse_torch_files(_files(None, problems=("version.py: Permission denied",)), packages=(), requires=())
    assert isinstance(build, Unknown) and "Permission denied" in build.reason


def test_a_version_py_without_cuda_leaves_cuda_unsettled():
    build = parse_torch_files(_files(b"__version__ = '2.5.1'\n"), packages=(), requires=())
    assert isinstance(build, TorchBuild) and "cuda" in unsettled(build) and "debug" in unsettled(build)


# ---------------------------------------------------------------- torch 2.11.0+cu130 on an H100 (recorded files)

CU130 = FILES / "2.11.0+cu130"


def _recorded_strings(library: str) -> bytes:
    """The NUL-terminated strings of `library` that so-strings.txt recorded, as they sit in the file."""
    lines = (CU130 / "so-strings.txt").read_text().splitlines()
    return b"".join(b"\x00" + line.split(" ", 2)[2].encode() + b"\x00" for line in lines if line.startswith(library + " "))


def _cu130_dists() -> tuple[Distribution, ...]:
    rows = (line.split() for line in (CU130 / "nvidia-dists.txt").read_text().splitlines() if line.strip())
    return tuple(Distribution(name=name, version=version, requires=()) for name, version in rows)


def test_the_cuda_build_from_its_recorded_files_is_what_its_import_reported():
    import json

    files = _files((CU130 / "version.py").read_bytes(), cmake=(CU130 / "TorchConfig.cmake").read_bytes(),
                   c10=(CU130 / "libc10.so.extract").read_bytes(), arch_library=_recorded_strings("libtorch_python.so"),
                   bundled=("libc10.so", "libc10_cuda.so", "libtorch_cuda.so", "libtorch_python.so"))
    requires = tuple((CU130 / "torch.requires.txt").read_text().splitlines())
    build = parse_torch_files(files, packages=_cu130_dists(), requires=requires)
    imported = json.loads((CU130 / "import.json").read_text())
    assert build.version == imported["version"] == "2.11.0+cu130"
    assert (build.cuda, build.hip, build.debug) == (imported["cuda"], imported["hip"], imported["debug"])
    assert list(build.arch_list) == imported["arch_list"]
    assert build.cudnn == str(imported["cudnn"]) == "91900"
    assert build.nccl == ".".join(map(str, imported["nccl"])) == "2.28.9"
    assert build.cxx11_abi is imported["cxx11"] is True
    assert build.xnnpack is True  # the doctor run there, which imported torch, reported xnnpack true
    assert unsettled(build) == ()


def test_the_cuda_libraries_strings_name_no_architecture_list():
    # libtorch_cuda.so's strings that matched the recording's search are cuDNN messages, not an arch list.
    assert isinstance(find_arch_flags(_recorded_strings("libtorch_cuda.so")), Unknown)
    assert find_arch_flags(_recorded_strings("libtorch_python.so")) == ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")


def test_the_recorded_cmake_files_lack_the_abi_flag_so_libc10_decides():
    for version in (CU130, CPU):
        assert cxx11_abi((version / "TorchConfig.cmake").read_bytes(), None) == Unknown(
            reason="neither TorchConfig.cmake's -D_GLIBCXX_USE_CXX11_ABI nor libc10.so could be read")


# ---------------------------------------------------------------- the ABI


@pytest.mark.parametrize("cmake, c10, expected", [
    (b'  set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")\n', None, False),
    (b'  set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")\n', b"\x7fELF anything", True),
    (None, b"\x7fELF\x00_ZNSsC1EPKcRKSaIcE\x00", False),  # old-ABI std::string (Ss), no __cxx11
])
def test_the_abi_from_the_cmake_flag_else_libc10(cmake, c10, expected):
    assert cxx11_abi(cmake, c10) is expected


def test_no_abi_source_is_unknown():
    assert isinstance(xnnpack_enabled(b"no flag here"), Unknown) and isinstance(xnnpack_enabled(None), Unknown)
    assert isinstance(cxx11_abi(b"no flag here", None), Unknown)
    assert isinstance(cxx11_abi(None, b"not an ELF file __cxx11"), Unknown)


# ---------------------------------------------------------------- a CUDA build


def test_a_cuda_build_from_its_files_and_the_wheels_it_requires():
    files = _files(CUDA_VERSION_PY, cmake=b'"-D_GLIBCXX_USE_CXX11_ABI=1"', arch_library=ARCHS)
    build = parse_torch_files(files, packages=CUDA_DISTS, requires=CUDA_REQUIRES)
    assert (build.cuda, build.cudnn, build.nccl) == ("12.8", "91002", "2.27.3")
    assert build.arch_list == ("sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")
    assert unsettled(build) == ()


@pytest.mark.parametrize("change, fact", [
    ({"bundled": ("libcudnn.so.9", "libtorch_cuda.so")}, "cudnn"),
    ({"shadowing": ("/opt/nccl/lib/libnccl.so.2",)}, "nccl"),
    ({"arch_library": None}, "arch_list"),
    ({"arch_library": ARCHS + b"sm_90 sm_100\x00"}, "arch_list"),
])
def test_what_the_files_cannot_settle_is_unknown(change, fact):
    files = _files(CUDA_VERSION_PY, **{"cmake": b'"-D_GLIBCXX_USE_CXX11_ABI=1"', "arch_library": ARCHS, **change})
    build = parse_torch_files(files, packages=CUDA_DISTS, requires=CUDA_REQUIRES)
    assert unsettled(build) == (fact,)


def test_a_wheel_torch_does_not_require_is_not_taken_for_its_library():
    files = _files(CUDA_VERSION_PY, cmake=b'"-D_GLIBCXX_USE_CXX11_ABI=1"', arch_library=ARCHS)
    build = parse_torch_files(files, packages=CUDA_DISTS, requires=())  # a conda or source build
    assert unsettled(build) == ("cudnn", "nccl")
    assert "nvidia-cudnn" in build.cudnn.reason


@pytest.mark.parametrize("version, number", [("9.10.2.21", "91002"), ("9.1.0.70", "90100"), ("8.9.2.26", "8902")])
def test_cudnn_number_as_torch_reports_it(version, number):
    assert cudnn_number(version) == number


def test_nccl_version_text():
    assert nccl_text("2.27.3") == "2.27.3" and nccl_text("2.21.5.post1") == "2.21.5"
    assert isinstance(nccl_text("two"), Unknown) and isinstance(cudnn_number("9"), Unknown)


def test_arch_strings_are_whole_nul_terminated_words():
    assert isinstance(find_arch_flags(b"\x00-gencode arch=compute_90,code=sm_90\x00"), Unknown)
    assert find_arch_flags(b"sm_90\x00") == ("sm_90",)


# ---------------------------------------------------------------- the fetch


def test_the_fetch_reads_a_cuda_build_and_what_may_shadow_its_libraries(tmp_path):
    torch = tmp_path / "torch"
    (torch / "lib").mkdir(parents=True)
    (torch / "version.py").write_bytes(CUDA_VERSION_PY)
    (torch / "lib" / "libtorch_python.so").write_bytes(ARCHS)
    (torch / "lib" / "libc10.so").write_bytes(b"\x7fELF__cxx11")
    other = tmp_path / "nccl"
    other.mkdir()
    (other / "libnccl.so.2").write_bytes(b"")
    env = {"LD_LIBRARY_PATH": f"{tmp_path / 'absent'}::{other}", "LD_PRELOAD": "/x/libcudnn.so.9 /y/libfoo.so"}
    files = fetch_torch_files(torch, env)
    assert files.cmake is None and files.c10 == b"\x7fELF__cxx11" and files.arch_library == ARCHS
    assert files.shadowing == ("/x/libcudnn.so.9", str(other / "libnccl.so.2"))
    assert files.bundled == ("libc10.so", "libtorch_python.so")


def test_the_fetch_never_raises_on_an_unreadable_file(tmp_path):
    torch = tmp_path / "torch"
    (torch / "version.py").mkdir(parents=True)  # a directory where the file should be
    files = fetch_torch_files(torch, {})
    assert files.version_py is None and files.problems and files.bundled == ()


# ---------------------------------------------------------------- the loader check and the import it stands in for


def _load(stdout: str, **kw) -> RunResult:
    return RunResult(argv=("python",), returncode=kw.pop("returncode", 0), stdout=stdout, stderr="", **kw)


def test_the_load_report():
    assert parse_torch_load(_load(LOAD_MARK + '{"loaded": true}')) is None
    error = parse_torch_load(_load(LOAD_MARK + '{"loaded": false, "error": "libnccl.so.2: cannot open shared object file"}'))
    assert error == "libnccl.so.2: cannot open shared object file"
    timed_out = parse_torch_load(_load("", returncode=None, timed_out_after=60.0))
    assert isinstance(timed_out, Unknown) and "COMPAT_TORCH_TIMEOUT" in timed_out.reason


def _venv_with_torch(tmp_path: Path, version_py: bytes, extension: bytes | None) -> tuple[Path, Path]:
    root = tmp_path / "venv"
    venv.create(root, with_pip=False, symlinks=True)
    site = next((root / "lib").glob("python3*/site-packages"))
    shutil.copytree(DATA / "envs" / "torch-2.5.1+cu124.dist-info", site / "torch-2.5.1+cu124.dist-info")
    pkg = site / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text((DATA / "torch" / "undefined_symbol.py").read_text())
    (pkg / "version.py").write_bytes(version_py)
    if extension is not None:
        import importlib.machinery

        (pkg / f"_C{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(extension)
    return root / "bin" / "python", pkg


@pytest.mark.parametrize("extension", [None, b"not a shared library"])
def test_a_refused_load_asks_the_import_which_gives_its_own_words(tmp_path, extension):
    python, pkg = _venv_with_torch(tmp_path, b"__version__ = '2.5.1+cpu'\ndebug = False\ncuda = None\nhip = None\n", extension)
    assert parse_torch_load(fetch_torch_load(python, pkg, timeout=30)) is not None
    interp = fetch_interpreter(python, timeout=30)
    assert interp.torch_dir == pkg
    dist = next(d for d in interp.distributions if d.name == "torch")
    build = read_torch(python, directory=interp.torch_dir, dist=dist, packages=interp.distributions, matrix=None, timeout=30)
    assert build.source is TorchSource.METADATA
    assert "undefined symbol: ncclCommRegister" in build.import_error


@pytest.mark.needs_torch
def test_the_real_cpu_torch_is_read_from_files_and_its_load_cached(tmp_path, monkeypatch):
    interp = fetch_interpreter(Path(sys.executable), timeout=30)
    dist = next(d for d in interp.distributions if d.name == "torch")
    args = {"directory": interp.torch_dir, "dist": dist, "packages": interp.distributions, "matrix": None,
            "timeout": 60, "stamp": interp.torch_stamp, "cache_dir": tmp_path}
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    # Its libraries' files settle that they load: no child runs, nothing is cached.
    build = read_torch(Path(sys.executable), **args)
    assert build.source is TorchSource.FILES and build.import_error is None
    assert build.version == "2.13.0+cpu" and build.cuda is None and build.arch_list == () and build.cxx11_abi is True
    assert not (tmp_path / "torch").exists()
    # Asked to load them (COMPAT_TORCH_LOAD), the child loads them, and its report is cached per stamp.
    assert read_torch(Path(sys.executable), **args, load=True) == build
    again = fetch_torch_load(Path(sys.executable), interp.torch_dir, timeout=60, stamp=interp.torch_stamp, cache_dir=tmp_path)
    assert again.argv[-1] == "<cached>" and parse_torch_load(again) is None
    assert read_torch(Path(sys.executable), **args, load=True) == build


def test_a_planted_load_report_is_not_trusted(tmp_path):
    from compat.sources.probe import torch as torch_probe

    key = torch_probe._cache_key("stamp", (*torch_probe.LOAD_ARGS, str(tmp_path)))
    entry = tmp_path / "torch" / f"{key}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(LOAD_MARK + '{"loaded": "yes"}\n')
    result = fetch_torch_load(tmp_path / "no-python", tmp_path, timeout=2, stamp="stamp", cache_dir=tmp_path)
    assert result.argv[-1] != "<cached>" and parse_torch_load(result) is not None


@pytest.mark.needs_torch
def test_a_cold_probe_of_the_real_torch_imports_nothing(tmp_path, monkeypatch):
    from compat.matrix import load_matrix
    from compat.sources.probe import ProbeRequest, probe

    def no_import(*args, **kwargs):
        raise AssertionError("the probe imported torch although its files settle every judged fact")

    monkeypatch.setattr("compat.sources.probe.torch.fetch_torch_import", no_import)
    facts = probe(ProbeRequest(python=Path(sys.executable), hardware=False, host=False, cache_dir=tmp_path),
                  lambda: load_matrix())  # the matrix as a call, as doctor passes it while it loads
    assert facts.torch.source is TorchSource.FILES and facts.torch.import_error is None
    assert facts.torch.version == "2.13.0+cpu" and facts.torch.xnnpack is False


@pytest.mark.needs_torch
def test_a_probe_asked_to_load_torch_runs_the_loading_child(tmp_path, monkeypatch):
    from compat.matrix import load_matrix
    from compat.sources.probe import ProbeRequest, probe
    from compat.sources.probe import torch as torch_probe

    loads: list[Path] = []
    real = torch_probe.fetch_torch_load

    def counted(python, directory, **kwargs):
        loads.append(directory)
        return real(python, directory, **kwargs)

    monkeypatch.setattr(torch_probe, "fetch_torch_load", counted)
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    request = ProbeRequest(python=Path(sys.executable), hardware=False, host=False, cache_dir=tmp_path)
    assert probe(request, load_matrix()).torch.import_error is None and loads == []  # the files settle it
    facts = probe(ProbeRequest(**{**request.__dict__, "load_torch": True}), load_matrix())
    assert facts.torch.import_error is None and len(loads) == 1
