"""The torch build: read from its files, else by importing torch in a child of the target interpreter.

`read_torch` is the probe's entry. torch's files state every build fact doctor judges (`torch_files.py`), read in
milliseconds; whether torch imports is read from its libraries' files where they settle it (`torch_libs.py`: every
library found where torch was built to find it, every symbol version defined), else asked of the dynamic loader, in
a child that loads torch's native libraries as `import torch` does (`libtorch_global_deps.so` globally, then the
`torch._C` extension with the interpreter's dlopen flags), which is where an import fails for a missing library or
an undefined symbol. The child costs a fraction of the import (half a CPU-second for a CPU build) and, like the
import's report, is cached per install stamp; COMPAT_TORCH_LOAD=1 runs it even where the files settle the question.
torch is imported only where the files leave a judged fact unknown, or where the loader refuses: torch's own import
then says whether it really fails (its fallback preloads the nvidia wheels' libraries) and in what words.

The import child never initializes CUDA (`torch.cuda.is_available()` can hang on a broken driver):
everything it reads is compile-time. When the import fails (ImportError, a crash by signal,
a hang) that failure is itself a fact, and the build is read from the distribution's version
and the matrix instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from compat.matrix import Matrix
from compat.model.facts import Distribution, TorchBuild, TorchSource
from compat.model.torch_variant import TorchVariant
from compat.model.unknown import Unknown
from compat.sources.cache import store
from compat.sources.probe import MatrixSource, matrix_now
from compat.sources.probe._run import MAX_MEMORY, Outcome, RunResult, marked_json, run, seconds
from compat.sources.probe.interpreter import SAFE_PATH, child_env
from compat.sources.probe.torch_files import fetch_torch_files, parse_torch_files, unsettled
from compat.sources.probe.torch_libs import undecided

MARK = "COMPAT-TORCH:"
TORCH_MAX_MEMORY = 8 * MAX_MEMORY
"""Data memory the torch-importing child may use (32 GiB): a CUDA build's host side is a few GiB."""

IMPORT_TIMEOUT = 60.0
"""Seconds `import torch` is given at the least. A CUDA build maps about 2 GB of libraries; on a
login node with a cold page cache and a busy file system that alone takes tens of seconds, so the
10 s that suits nvidia-smi reports a torch that imports fine as broken."""
STARTUP_FACTOR = 200.0
"""The import is given this many times the measured start-up of the same interpreter when that is
more than IMPORT_TIMEOUT: a bare `python -c pass` costs about 20 ms on an idle machine and an import
of torch about 2 s (100 times), so a machine slow enough to start Python in 0.3 s gets 60 s and a
slower one more."""
MAX_IMPORT_TIMEOUT = 600.0
"""Never more than this: a hang is still reported within ten minutes."""


def import_bound(python: Path, *, override: float | None = None) -> float:
    """Seconds to allow `import torch` in `python`: `override` when given (COMPAT_TORCH_TIMEOUT),
    else IMPORT_TIMEOUT, stretched on a machine where starting the interpreter is itself slow."""
    if override is not None:
        return override
    start = time.monotonic()
    probe = run([str(python), "-S", "-c", "pass"], timeout=IMPORT_TIMEOUT, env=child_env(os.environ))
    startup = time.monotonic() - start
    if probe.outcome is not Outcome.OK:
        return IMPORT_TIMEOUT  # the import itself will say what is wrong with this interpreter
    return bound_for_startup(startup)


def bound_for_startup(startup: float) -> float:
    """The import bound for an interpreter that took `startup` seconds to run `pass` (pure)."""
    return min(MAX_IMPORT_TIMEOUT, max(IMPORT_TIMEOUT, startup * STARTUP_FACTOR))


CHILD = SAFE_PATH + r'''
import json
import importlib.util
if importlib.util.find_spec("torch") is None:
    print("COMPAT-TORCH:" + json.dumps({"installed": False}))
    sys.exit(0)
import torch  # a failure here is reported by the parent from stderr and the exit status

def read(fn):
    # The probe's child boundary: each read asks torch, whose failures have no closed list (RuntimeError from
    # CUDA, AssertionError from a CPU build, AttributeError from an old release); each is that fact's reason.
    try:
        return fn()
    except Exception as exc:
        return {"unknown": "%s: %s" % (type(exc).__name__, exc)}

def cudnn():
    if not torch.backends.cudnn.is_available():
        return None
    v = torch.backends.cudnn.version()
    return None if v is None else str(v)

def nccl():
    if torch.version.cuda is None:
        return None
    v = torch.cuda.nccl.version()
    return ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v)

def arch_list():
    # torch.cuda.get_arch_list() called is_available() (a CUDA init) in older releases;
    # the compile-time flags it reads are safe to read directly.
    if not hasattr(torch._C, "_cuda_getDeviceCount"):
        return []
    if not hasattr(torch._C, "_cuda_getArchFlags"):
        return {"unknown": "this torch does not expose its compiled architectures without initializing CUDA"}
    flags = torch._C._cuda_getArchFlags()
    return flags.split() if flags else []

def xnnpack():
    import torch.backends.xnnpack
    return bool(torch.backends.xnnpack.enabled)

print("COMPAT-TORCH:" + json.dumps({
    "installed": True,
    "debug": read(lambda: bool(torch.version.debug)),
    "hip": read(lambda: torch.version.hip),
    "xnnpack": read(xnnpack),
    "version": str(torch.__version__),
    "cuda": read(lambda: torch.version.cuda),
    "cudnn": read(cudnn),
    "nccl": read(nccl),
    "arch_list": read(arch_list),
    "cxx11_abi": read(lambda: bool(torch._C._GLIBCXX_USE_CXX11_ABI)),
}))
'''


LOAD_MARK = "COMPAT-TORCH-LOAD:"
LOAD_CHILD = SAFE_PATH + r'''
import ctypes
import importlib.machinery
import json
import os
root = sys.argv[1]
def report(**fields):
    print("COMPAT-TORCH-LOAD:" + json.dumps(fields))
    sys.exit(0)
ext = [os.path.join(root, "_C" + s) for s in importlib.machinery.EXTENSION_SUFFIXES]
ext = [p for p in ext if os.path.isfile(p)]
if not ext:
    report(loaded=False, error="no torch._C extension in " + root)
try:
    # torch/__init__.py loads this one first, globally (_load_global_deps), then imports torch._C, which Python
    # loads with its dlopen flags (RTLD_NOW): an undefined symbol or a missing library fails here as it fails there.
    deps = os.path.join(root, "lib", "libtorch_global_deps.so")
    if os.path.isfile(deps):
        ctypes.CDLL(deps, mode=ctypes.RTLD_GLOBAL)
    ctypes.CDLL(ext[0], mode=sys.getdlopenflags())
except OSError as exc:
    report(loaded=False, error=str(exc))
report(loaded=True)
'''

IMPORT_ARGS = ("-c", CHILD)
LOAD_ARGS = ("-S", "-c", LOAD_CHILD)


def read_torch(
    python: Path, *, directory: Path | None, dist: Distribution | None | Unknown, packages: Sequence[Distribution],
    matrix: MatrixSource, timeout: float | None = None, stamp: str | None = None,
    cache_dir: Path | None = None, load: bool = False,
) -> TorchBuild | None | Unknown:
    """The torch build of `python`: from its files where they settle every judged fact and its libraries load,
    else from importing it (`fetch_torch_import`, `parse_torch`). `directory`: where `import torch` would load
    it from (None: not importable); `dist`: its distribution (None: not installed); `matrix`: asked for only where
    the import is read; `load`: load torch's libraries in a child even where their files settle that they load."""
    if directory is not None and isinstance(dist, Distribution):
        build = parse_torch_files(fetch_torch_files(directory, os.environ), packages=packages, requires=dist.requires)
        if isinstance(build, TorchBuild) and not unsettled(build):
            # The files settle most installs (`torch_libs.py`); the child loads the libraries where they do not.
            why = "COMPAT_TORCH_LOAD is set" if load else undecided(
                directory, python=python, environ=os.environ, packages=packages, requires=dist.requires)
            if why is None:
                return build
            loaded = parse_torch_load(fetch_torch_load(python, directory, timeout=timeout, stamp=stamp, cache_dir=cache_dir))
            if loaded is None or isinstance(loaded, Unknown):
                return dataclasses.replace(build, import_error=loaded)
            # The loader refused: torch's own import says whether it really fails, and in its own words.
    result = fetch_torch_import(python, timeout=timeout, stamp=stamp, cache_dir=cache_dir)
    return parse_torch(result, dist, matrix_now(matrix))


def fetch_torch_load(
    python: Path, directory: Path, *, timeout: float | None = None, stamp: str | None = None, cache_dir: Path | None = None,
) -> RunResult:
    """Load torch's native libraries in a child of `python` as `import torch` would; cached per stamp when they load."""
    return _cached_run(
        python, (*LOAD_ARGS, str(directory)), mark=LOAD_MARK, stamp=stamp, cache_dir=cache_dir,
        timeout=timeout, succeeded=lambda report: report.get("loaded") is True,
    )


def parse_torch_load(result: RunResult) -> str | None | Unknown:
    """None when torch's libraries loaded, the loader's error when they did not, Unknown when that is not known."""
    report = marked_json(result, LOAD_MARK)
    if report is not None and report.get("loaded") is True:
        return None
    if report is not None and isinstance(report.get("error"), str):
        return report["error"][:500]
    if result.timed_out_after is not None:
        why = f"loading torch's libraries did not finish within {seconds(result.timed_out_after)}"
        return Unknown(reason=f"{why}; set COMPAT_TORCH_TIMEOUT to allow more")
    # Killed by a signal, or a report compat cannot read: the import, run next, says what happens.
    return result.problem or "loading torch's libraries printed nothing"


def fetch_torch_import(
    python: Path, *, timeout: float | None = None, stamp: str | None = None, cache_dir: Path | None = None,
) -> RunResult:
    """Import torch in a child of `python`; with a `stamp`, reuse the report of an identical install.

    `timeout` None: the bound adapts to the machine (`import_bound`), measured only on a cache miss.

    Importing torch costs a second or more. The report depends only on the files the stamp
    digests and on the library search path, so a successful import is cached under that key.
    Failures are never cached: they may depend on the moment (a driver being reloaded). No
    `cache_dir`, no cache.
    """
    return _cached_run(
        python, IMPORT_ARGS, mark=MARK, stamp=stamp, cache_dir=cache_dir, timeout=timeout,
        succeeded=lambda report: report.get("installed") is True,
    )


def _cached_run(
    python: Path, args: tuple[str, ...], *, mark: str, stamp: str | None, cache_dir: Path | None, timeout: float | None,
    succeeded: Callable[[dict], bool],
) -> RunResult:
    """Run `python args` (its report is the line starting with `mark`), or reuse the stored report of a run for the
    same stamp, library path and program that `succeeded`; only such reports are stored."""
    key = _cache_key(stamp, args)
    entry = cache_dir / "torch" / f"{key}.json" if cache_dir is not None and key is not None else None
    if entry is not None:
        try:
            cached = entry.read_text(encoding="utf-8")
        except OSError:
            cached = None
        if cached is not None and cached.startswith(mark):
            hit = RunResult(argv=(str(python), "-c", "<cached>"), returncode=0, stdout=cached, stderr="")
            report = marked_json(hit, mark)
            if report is not None and succeeded(report):  # only what the store below writes
                return hit
    # Loading torch with CUDA maps its libraries and creates host buffers: room for that, not for a runaway.
    bound = import_bound(python) if timeout is None else timeout
    result = run([str(python), *args], timeout=bound, env=child_env(os.environ), max_memory=TORCH_MAX_MEMORY)
    if entry is not None and result.ok:
        line = next((ln for ln in reversed(result.stdout.splitlines()) if ln.startswith(mark)), None)
        report = marked_json(result, mark)
        if line is not None and report is not None and succeeded(report):
            store(entry, (line + "\n").encode())
    return result


def _cache_key(stamp: str | None, args: tuple[str, ...] | None = None) -> str | None:
    """The cache entry's name for a child run with `args` (default: the import's) for an install's `stamp`."""
    if not stamp:
        return None
    # What the dynamic loader would pick up differently, and what this compat asks the child.
    program = "\0".join(IMPORT_ARGS if args is None else args)
    context = "\0".join((stamp, os.environ.get("LD_LIBRARY_PATH", ""), os.environ.get("LD_PRELOAD", ""), program))
    return hashlib.sha256(context.encode()).hexdigest()[:32]


def parse_torch(result: RunResult, dist: Distribution | None | Unknown, matrix: Matrix) -> TorchBuild | None | Unknown:
    """The build from the child's report, or from metadata when the import failed.

    `dist` is the torch distribution of the same interpreter (None when not installed).
    """
    data = marked_json(result, MARK)
    if data is not None and data.get("installed") is False:
        if isinstance(dist, Distribution):
            # A dist-info without the package (a half-removed or hand-made install, or a fake
            # environment): nothing was imported, so no import failed; the metadata still says
            # which build pip believes is there.
            return from_metadata(dist.version, matrix, import_error=None, why="torch has metadata but no importable module")
        return None
    if data is not None and data.get("installed") is True and "version" in data:
        return TorchBuild(
            version=str(data["version"]),
            cuda=_opt_str(data.get("cuda")),
            cudnn=_opt_str(data.get("cudnn")),
            nccl=_opt_str(data.get("nccl")),
            arch_list=_arch_list(data.get("arch_list")),
            cxx11_abi=_bool(data.get("cxx11_abi")),
            source=TorchSource.IMPORT,
            debug=_bool(data.get("debug"), "whether it is a debug build"),
            hip=_opt_str(data.get("hip")),
            xnnpack=_bool(data.get("xnnpack"), "whether XNNPACK is enabled"),
        )
    error = import_error(result)
    if dist is None:
        return None
    if isinstance(dist, Unknown):
        return Unknown(reason=f"import torch failed ({error}) and the installed packages are unknown")
    if result.timed_out_after is not None:
        # A slow import is not a failed one: whether torch imports here is not known.
        why = f"{error}; set COMPAT_TORCH_TIMEOUT to allow more"
        return from_metadata(dist.version, matrix, import_error=Unknown(reason=why), why=why)
    return from_metadata(dist.version, matrix, import_error=error)


def import_error(result: RunResult) -> str:
    """One line saying how `import torch` failed."""
    if result.timed_out_after is not None:
        return f"import torch did not finish within {seconds(result.timed_out_after)}"
    if result.error:
        return result.error
    if result.returncode is not None and result.returncode < 0:
        return (result.problem or "").replace(f"{result.name} was", "import torch was", 1)
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    # The exception line of a traceback is its last line ("ImportError: .../libtorch_cuda.so: ...").
    if lines:
        return lines[-1][:500]
    return result.problem or "import torch printed nothing"


def from_metadata(
    version: str, matrix: Matrix, *, import_error: str | None | Unknown, why: str | None = None,
) -> TorchBuild:
    """What the version string and the matrix say about a build that was not imported."""
    reason = why or "torch could not be imported"
    return TorchBuild(
        version=version,
        cuda=cuda_of_version(version, matrix),
        cudnn=Unknown(reason=reason),
        nccl=Unknown(reason=reason),
        arch_list=Unknown(reason=reason),
        cxx11_abi=Unknown(reason=reason),
        source=TorchSource.METADATA,
        import_error=import_error,
    )


def cuda_of_version(version: str, matrix: Matrix) -> str | None | Unknown:
    """"2.5.1+cu124" → "12.4"; "+cpu" → None; a plain version → the default variant of the matrix."""
    base, _, local = version.partition("+")
    if local:
        return cuda_of_variant(local)
    release = matrix.torch.release(base) if matrix is not None else None
    if release is None:
        return Unknown(reason=f"torch {version} has no local tag and its default CUDA variant is not in the matrix")
    return release.default_cuda


def cuda_of_variant(variant: str) -> str | None | Unknown:
    """"cu124" → "12.4"; None for a build without CUDA (cpu, rocm6.2, xpu); Unknown for a tag that names no build."""
    found = TorchVariant.find(variant)
    if found is None:
        return Unknown(reason=f"unrecognized torch variant {variant!r}")
    return found.cuda




def _unknown(value: object) -> Unknown | None:
    if isinstance(value, dict) and isinstance(value.get("unknown"), str):
        return Unknown(reason=value["unknown"])
    return None


def _opt_str(value: object) -> str | None | Unknown:
    if (u := _unknown(value)) is not None:
        return u
    return None if value is None else str(value)


def _arch_list(value: object) -> tuple[str, ...] | Unknown:
    if (u := _unknown(value)) is not None:
        return u
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return Unknown(reason="torch reported no architecture list")


def _bool(value: object, what: str = "its C++ ABI") -> bool | Unknown:
    if (u := _unknown(value)) is not None:
        return u
    if isinstance(value, bool):
        return value
    return Unknown(reason=f"torch did not report {what}")
