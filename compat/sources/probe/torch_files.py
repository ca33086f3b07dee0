"""torch's build facts read from its installed files, without importing it.

`import torch` costs seconds (a CUDA build maps about 2 GB of libraries), and what doctor judges of the build
was written into torch's files when it was built:
- `torch/version.py`: `__version__`, `cuda`, `hip`, `debug`, `git_version` (Python literals, read with `ast`);
- `torch/share/cmake/Torch/TorchConfig.cmake`: whether XNNPACK is built in (`if(ON)` around its library), and
  `-D_GLIBCXX_USE_CXX11_ABI=0|1`. Releases built for one ABI only
  no longer write the flag; then `lib/libc10.so` says it: `std::__cxx11::` appears in its symbol names only
  under the new ABI, and c10 exports functions taking `std::string`;
- the compiled architectures: the string `torch._C._cuda_getArchFlags()` returns ("sm_80 sm_90 ..."), a
  NUL-terminated constant of `lib/libtorch_python.so`;
- cuDNN and NCCL: the versions of the `nvidia-cudnn-cuXX` and `nvidia-nccl-cuXX` distributions torch requires,
  whose libraries torch's own load through their run path (a copy in `torch/lib`, LD_PRELOAD or a directory on
  LD_LIBRARY_PATH holding one may be loaded instead: then the version is unknown).
A fact the files do not settle is Unknown with its reason, and the probe imports torch instead (`torch.py`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from compat.model.facts import Distribution, TorchBuild, TorchSource
from compat.model.unknown import Unknown
from compat.regular_file import MIB, read_regular

SMALL = MIB
"""version.py and TorchConfig.cmake are a few KiB: anything larger is not torch's."""
LIBRARY = 512 * MIB
"""libc10.so is about 1.5 MB and libtorch_python.so 30-60 MB; a larger file is not read."""
ARCH_LIBRARY = "libtorch_python.so"
"""The library holding torch/csrc/cuda/Module.cpp's CUDA_ARCH_FLAGS constant (what `_cuda_getArchFlags` returns)."""

_ABI_FLAG = re.compile(rb"-D_GLIBCXX_USE_CXX11_ABI=([01])")
# TorchConfig.cmake.in's `if(@USE_XNNPACK@)` around the XNNPACK library, as configured: ON or OFF.
_XNNPACK = re.compile(rb"if\((ON|OFF|TRUE|FALSE|1|0)\)\s*append_torchlib_if_found\(XNNPACK\)")
_ARCH = rb"(?:sm|compute)_[0-9]+[a-z]?"
_ARCH_STRING = re.compile(_ARCH + rb"(?: " + _ARCH + rb")*")


@dataclass(frozen=True, kw_only=True)
class TorchFiles:
    """What was read of one torch installation; None where a file is absent or unreadable (`problems` says why)."""

    directory: str
    """The torch package directory the bytes come from, for the reasons of unknown facts."""
    version_py: bytes | None
    """torch/version.py."""
    cmake: bytes | None
    """torch/share/cmake/Torch/TorchConfig.cmake."""
    c10: bytes | None
    """torch/lib/libc10.so, read only where TorchConfig.cmake lacks the ABI flag."""
    arch_library: bytes | None
    """torch/lib/libtorch_python.so of a CUDA build (None for any other build: it has no architecture list)."""
    bundled: tuple[str, ...]
    """The file names in torch/lib: a libcudnn or libnccl there is torch's own copy, not the nvidia wheel's."""
    shadowing: tuple[str, ...]
    """libcudnn / libnccl files on LD_LIBRARY_PATH and LD_PRELOAD entries naming them: the loader may take these."""
    problems: tuple[str, ...] = ()
    """Why a file could not be read."""


def fetch_torch_files(directory: Path, environ: Mapping[str, str]) -> TorchFiles:
    """Read the files `parse_torch_files` needs from the torch package at `directory`; never raises on a host quirk."""
    problems: list[str] = []

    def read(path: Path, limit: int) -> bytes | None:
        try:
            return read_regular(path, limit=limit)
        except FileNotFoundError:
            return None
        except OSError as exc:
            problems.append(f"{path.name}: {exc.strerror or exc}")
            return None

    version_py = read(directory / "version.py", SMALL)
    cmake = read(directory / "share" / "cmake" / "Torch" / "TorchConfig.cmake", SMALL)
    c10 = read(directory / "lib" / "libc10.so", LIBRARY) if cmake is None or not _ABI_FLAG.search(cmake) else None
    values = parse_version_py(version_py) if version_py is not None else {}
    cuda_build = isinstance(values.get("cuda"), str)
    arch_library = read(directory / "lib" / ARCH_LIBRARY, LIBRARY) if cuda_build else None
    try:
        bundled = tuple(sorted(os.listdir(directory / "lib")))
    except OSError:
        bundled = ()
    return TorchFiles(
        directory=str(directory), version_py=version_py, cmake=cmake, c10=c10, arch_library=arch_library,
        bundled=bundled, shadowing=_shadowing(environ) if cuda_build else (), problems=tuple(problems),
    )


def _shadowing(environ: Mapping[str, str]) -> tuple[str, ...]:
    found = [entry for entry in environ.get("LD_PRELOAD", "").replace(":", " ").split() if _is_cudnn_or_nccl(os.path.basename(entry))]
    for entry in environ.get("LD_LIBRARY_PATH", "").split(":"):
        try:
            names = os.listdir(entry) if entry else []
        except OSError:
            continue  # a missing directory on the path is common and loads nothing
        found += [os.path.join(entry, name) for name in sorted(names) if _is_cudnn_or_nccl(name)]
    return tuple(found)


def _is_cudnn_or_nccl(name: str) -> bool:
    return name.startswith(("libcudnn.so", "libnccl.so"))


# ---------------------------------------------------------------- the pure parse


def parse_torch_files(files: TorchFiles, *, packages: Sequence[Distribution], requires: Sequence[str]) -> TorchBuild | Unknown:
    """The build as its files state it (source FILES); Unknown when version.py does not say which torch this is.

    `packages`: the distributions installed beside torch; `requires`: torch's own Requires-Dist lines.
    Each fact the files do not settle is Unknown with its reason (`unsettled` lists them).
    """
    if files.version_py is None:
        why = "; ".join(files.problems) or "it has no version.py"
        return Unknown(reason=f"torch's files at {files.directory} do not say its version: {why}")
    values = parse_version_py(files.version_py)
    version = values.get("__version__")
    if not isinstance(version, str) or not version:
        return Unknown(reason=f"{files.directory}/version.py does not set __version__")
    cuda = _optional_text(values, "cuda")
    hip = _optional_text(values, "hip")
    debug = values.get("debug")
    return TorchBuild(
        version=version,
        cuda=cuda,
        cudnn=_library_version(files, "cudnn", cuda, hip, packages, requires),
        nccl=_library_version(files, "nccl", cuda, hip, packages, requires),
        arch_list=_arch_list(files, cuda, hip),
        cxx11_abi=cxx11_abi(files.cmake, files.c10),
        source=TorchSource.FILES,
        debug=debug if isinstance(debug, bool) else Unknown(reason="torch/version.py does not set debug"),
        hip=hip,
        xnnpack=xnnpack_enabled(files.cmake),
    )


def unsettled(build: TorchBuild) -> tuple[str, ...]:
    """The facts of a build read from files that are Unknown and that doctor judges: each one needs the import."""
    judged = ("cuda", "hip", "debug", "cxx11_abi", "arch_list", "cudnn", "nccl")
    return tuple(name for name in judged if isinstance(getattr(build, name), Unknown))


def parse_version_py(text: bytes) -> dict[str, object]:
    """The literal values torch/version.py assigns (`cuda: Optional[str] = '12.4'` included); {} when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        else:
            continue
        try:
            values[name] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue  # computed, not written at build time: not a build fact
    return values


def _optional_text(values: dict[str, object], name: str) -> str | None | Unknown:
    if name not in values:
        return Unknown(reason=f"torch/version.py does not set {name}")
    value = values[name]
    if value is None or isinstance(value, str):
        return value
    return Unknown(reason=f"torch/version.py sets {name} to a {type(value).__name__}")


def cxx11_abi(cmake: bytes | None, c10: bytes | None) -> bool | Unknown:
    """The C++ ABI from TorchConfig.cmake's flag, else from libc10.so's symbol names."""
    if cmake is not None and (flag := _ABI_FLAG.search(cmake)) is not None:
        return flag.group(1) == b"1"
    if c10 is not None and c10.startswith(b"\x7fELF"):
        return b"__cxx11" in c10
    return Unknown(reason="neither TorchConfig.cmake's -D_GLIBCXX_USE_CXX11_ABI nor libc10.so could be read")


def xnnpack_enabled(cmake: bytes | None) -> bool | Unknown:
    """Whether torch was built with XNNPACK (USE_XNNPACK, as TorchConfig.cmake was configured with it)."""
    found = _XNNPACK.search(cmake) if cmake is not None else None
    if found is None:
        return Unknown(reason="TorchConfig.cmake does not say whether XNNPACK is enabled")
    return found.group(1) in (b"ON", b"TRUE", b"1")


def _arch_list(files: TorchFiles, cuda: str | None | Unknown, hip: str | None | Unknown) -> tuple[str, ...] | Unknown:
    if isinstance(cuda, Unknown):
        return cuda
    if cuda is None:
        if hip is None:
            return ()  # a CPU build compiles no GPU architectures (the import reports [] too)
        return Unknown(reason="a ROCm build's architectures are known only to an import")
    if files.arch_library is None:
        return Unknown(reason=f"{ARCH_LIBRARY} could not be read")
    return find_arch_flags(files.arch_library)


def find_arch_flags(data: bytes) -> tuple[str, ...] | Unknown:
    """The architectures of the one NUL-terminated string in `data` made only of `sm_XX`/`compute_XX` words."""
    found: set[bytes] = set()
    at = data.find(b"sm_")
    while at != -1:
        start = data.rfind(b"\0", 0, at) + 1
        end = data.find(b"\0", at)
        end = len(data) if end == -1 else end
        if _ARCH_STRING.fullmatch(data, start, end):
            found.add(data[start:end])
        at = data.find(b"sm_", max(end, at + 3))
    if len(found) == 1:
        return tuple(found.pop().decode("ascii").split())
    if not found:
        return Unknown(reason=f"{ARCH_LIBRARY} holds no architecture list")
    return Unknown(reason=f"{ARCH_LIBRARY} holds {len(found)} architecture lists")


def _library_version(
    files: TorchFiles, kind: str, cuda: str | None | Unknown, hip: str | None | Unknown,
    packages: Sequence[Distribution], requires: Sequence[str],
) -> str | None | Unknown:
    """cuDNN ("91002", as torch.backends.cudnn.version() reports it) or NCCL ("2.27.3") of a CUDA build."""
    if isinstance(cuda, Unknown):
        return cuda
    if cuda is None:
        if hip is None:
            return None  # a CPU build loads neither
        return Unknown(reason=f"a ROCm build's {kind} is known only to an import")
    own = [name for name in files.bundled if name.startswith(f"lib{kind}.so")]
    if own:
        return Unknown(reason=f"torch bundles its own {own[0]}, whose version only an import reads")
    shadow = [path for path in files.shadowing if os.path.basename(path).startswith(f"lib{kind}.so")]
    if shadow:
        return Unknown(reason=f"the loader may take {shadow[0]} (LD_LIBRARY_PATH or LD_PRELOAD) over the wheel's")
    wanted = {_requirement_name(line) for line in requires}
    # nvidia-cudnn-cu13, nvidia-nccl-cu12; CUDA 13's other wheels dropped the suffix (nvidia-cublas), these may too.
    dists = [d for d in packages if re.fullmatch(rf"nvidia-{kind}(?:-cu[0-9]+)?", d.name) and d.name in wanted]
    if len(dists) != 1:
        return Unknown(reason=f"torch requires {len(dists)} installed nvidia-{kind} distributions, not one")
    return (cudnn_number if kind == "cudnn" else nccl_text)(dists[0].version)


def _requirement_name(line: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(line).name)
    except InvalidRequirement:
        return ""


def cudnn_number(version: str) -> str | Unknown:
    """The nvidia-cudnn wheel's version as cudnnGetVersion() reports it: 9.10.2.21 → "91002", 8.9.2.26 → "8902"."""
    parts = re.match(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})", version)
    if parts is None:
        return Unknown(reason=f"nvidia-cudnn version {version[:40]!r} is not major.minor.patch")
    major, minor, patch = (int(p) for p in parts.groups())
    # cuDNN 9 changed CUDNN_VERSION from major*1000 to major*10000 (+ minor*100 + patch).
    return str(major * (10000 if major >= 9 else 1000) + minor * 100 + patch)


def nccl_text(version: str) -> str | Unknown:
    """The nvidia-nccl wheel's version as torch.cuda.nccl.version() reads it: 2.27.3 (a fourth part dropped)."""
    parts = re.match(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", version)
    if parts is None:
        return Unknown(reason=f"nvidia-nccl version {version[:40]!r} is not major.minor.patch")
    return ".".join(str(int(p)) for p in parts.group(0).split("."))

