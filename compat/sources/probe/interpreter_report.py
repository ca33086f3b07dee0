"""What the interpreter probe reads about an interpreter: run as the child's script, or called in-process.

The probe runs this file's text in the judged interpreter (`python -c`, after SAFE_PATH) and reads the line it
prints. When the judged interpreter is the one running compat, `collect` is called here instead, with the search
path the child would have had: the same values, read without starting a second interpreter.

Only the standard library, and kept compatible with Python 3.8 so an old venv can still be inspected: it may be
an old or minimal environment without `packaging`, and importing heavy packages would make the probe slow.
"""

import json
import os
import platform
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

MARK = "COMPAT-INTERPRETER:"


def _full(info: "Any") -> str:
    v = f"{info.major}.{info.minor}.{info.micro}"
    if info.releaselevel != "final":
        v += info.releaselevel[0] + str(info.serial)
    return v


def _markers() -> "dict[str, str]":
    return {
        "implementation_name": sys.implementation.name,
        "implementation_version": _full(sys.implementation.version),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def _glibc() -> "str | None":
    glibc = None
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") or ""
        if text.startswith("glibc "):
            glibc = text.split()[1]
    except (AttributeError, ValueError, OSError):
        pass
    if glibc is None:
        lib, ver = platform.libc_ver()
        if lib == "glibc" and ver:
            glibc = ver
    return glibc


def _distributions(path: "list[str]") -> "tuple[list[dict[str, Any]], list[str]]":
    import importlib.metadata as md

    dists: list[dict[str, Any]] = []
    broken: list[str] = []
    seen: set[str] = set()
    for dist in md.distributions(path=path):
        try:
            meta = dist.metadata
            name = meta["Name"] if meta is not None else None
            version = meta["Version"] if meta is not None else None
            if not name or not version:
                broken.append(str(getattr(dist, "_path", "?")))
                continue
            key = re.sub(r"[-_.]+", "-", name).lower()
            if key in seen:
                continue  # shadowed by an earlier entry on sys.path, as import would see it
            seen.add(key)
            installer = dist.read_text("INSTALLER")
            dists.append({
                "name": key,
                "version": version,
                # dist.requires would parse the metadata a second time: the same headers, asked of this parse
                # (egg-info's requires.txt only where the metadata names none, as dist.requires reads it).
                "requires": list(meta.get_all("Requires-Dist") or dist.requires or []),
                "installer": installer.strip() if installer and installer.strip() else None,
            })
        except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:
            # unreadable or torn metadata (permissions, not UTF-8, a field missing): this one is broken, the rest are read
            broken.append(f"{getattr(dist, '_path', '?')}: {exc}")
    return dists, broken


def _find_origin(name: str, search: "list[str] | None") -> "str | None":
    # The import system's finders, asked as `import name` would ask them; `search` None: sys.path (the child),
    # else the list the child's sys.path would be (in-process, where sys.path[0] is compat's own entry point).
    if search is None:
        import importlib.util

        spec = importlib.util.find_spec(name)
    else:
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, search) if find is not None else None
            if spec is not None:
                break
    return spec.origin if spec is not None else None


def _package_dir(name: str, search: "list[str] | None") -> "str | None":
    # The directory `import name` would load the package from; None when it is not importable.
    try:
        origin = _find_origin(name, search)
    except (ImportError, ValueError):
        return None
    return os.path.dirname(origin) if origin else None


def _stamp(root: "str | None") -> "list[list[Any]] | None":
    # Size and mtime of the files whose change would change what torch's files and its import report
    # (its version file, compiled core, bundled libraries and the nvidia-* wheels beside it).
    import glob

    if root is None:
        return None
    site = os.path.dirname(root)
    files = [os.path.join(root, "version.py")]
    for pattern in ("_C*.so", "lib/*.so*"):
        files += sorted(glob.glob(os.path.join(root, pattern)))
    files += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "*.so*")))
    out = []
    for f in files:
        try:
            st = os.stat(f)
            out.append([f, st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([f, None, None])
    return out


NO_PACKAGES = "--no-packages"
"""The child's first argument when only the interpreter is asked for (a requirements file names the packages)."""


def collect(first: "list[str]", search: "list[str] | None" = None, packages: bool = True) -> "dict[str, Any]":
    """The report: `first` (the PYTHONPATH entries, read for metadata only) searched before `search` (None:
    sys.path, as the child sees it). `packages` False: no distributions and no torch stamp, which is most of
    the work (a requirements file judged on its own needs only the version, markers and platform)."""
    dists: list[dict[str, Any]] = []
    broken: list[str] = []
    if packages:
        path = list(sys.path) if search is None else list(search)
        dists, broken = _distributions(list(first) + path)
    torch_dir = _package_dir("torch", search) if packages else None
    return {
        "platform": platform.platform(),
        "torch_stamp": _stamp(torch_dir),
        "torch_dir": torch_dir,
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "markers": _markers(),
        "glibc": _glibc(),
        "is_linux": sys.platform.startswith("linux"),
        "distributions": dists,
        "broken": broken,
    }


def main(argv: "list[str]") -> None:
    packages = not (argv and argv[0] == NO_PACKAGES)
    print(MARK + json.dumps(collect(argv if packages else argv[1:], packages=packages)))
