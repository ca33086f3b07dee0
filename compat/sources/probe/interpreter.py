"""The target interpreter and its installed distributions, read by running it once.

The child sees the user site exactly as that interpreter does (`pip install --user` is the usual
install on a cluster's login node, and PYTHONUSERBASE / PYTHONNOUSERSITE are honoured), but no
code from the current directory or PYTHONPATH runs in it: PYTHONPATH is taken out of its
environment (its entries are read for metadata only, never imported) and the current directory
leaves sys.path before anything is imported. It imports only the standard library: it may be an
old or minimal environment without `packaging`, and importing heavy packages would make the
probe slow and fragile.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import Distribution, Python
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult, marked_json, run

MARK = "COMPAT-INTERPRETER:"

# Run first in every child: `-c` puts the current directory first on sys.path, where a json.py or
# platform.py would be imported instead of the standard library's. Only builtins run before it.
SAFE_PATH = r'''
import sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
'''

# Variables that would run code in the child that the user's `python train.py` would not see
# through the packages (PYTHONPATH is read for metadata by the parent instead).
_DROPPED = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONSAFEPATH")


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a probe child: the user's, less what would inject code into it."""
    return {k: v for k, v in environ.items() if k not in _DROPPED}


def pythonpath_entries(environ: Mapping[str, str]) -> list[str]:
    """PYTHONPATH as absolute directories, in order: where the interpreter would look first."""
    return [os.path.abspath(p) for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]


# Kept compatible with Python 3.8 so an old venv can still be inspected.
CHILD = SAFE_PATH + r'''
import json, os, platform, re
import importlib.metadata as md

def full(info):
    v = "%d.%d.%d" % (info.major, info.minor, info.micro)
    if info.releaselevel != "final":
        v += info.releaselevel[0] + str(info.serial)
    return v

markers = {
    "implementation_name": sys.implementation.name,
    "implementation_version": full(sys.implementation.version),
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

dists, broken, seen = [], [], set()
# argv: the PYTHONPATH entries, searched before sys.path as the interpreter would (metadata only).
for dist in md.distributions(path=sys.argv[1:] + sys.path):
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
            "requires": list(dist.requires or []),
            "installer": installer.strip() if installer and installer.strip() else None,
        })
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:
        # unreadable or torn metadata (permissions, not UTF-8, a field missing): this one is broken, the rest are read
        broken.append("%s: %s" % (getattr(dist, "_path", "?"), exc))
def stamp(name):
    # Size and mtime of the files whose change would change what importing `name` reports
    # (its version file, compiled core, bundled libraries and the nvidia-* wheels beside it).
    import glob, importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    root = os.path.dirname(spec.origin)
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

print("COMPAT-INTERPRETER:" + json.dumps({
    "platform": platform.platform(),
    "torch_stamp": stamp("torch"),
    "version": platform.python_version(),
    "implementation": sys.implementation.name,
    "executable": sys.executable,
    "markers": markers,
    "glibc": glibc,
    "is_linux": sys.platform.startswith("linux"),
    "distributions": dists,
    "broken": broken,
}))
'''


@dataclass(frozen=True, kw_only=True)
class Interpreter:
    python: Python
    """The interpreter's own facts."""
    distributions: tuple[Distribution, ...]
    """Installed distributions, sorted by name."""
    broken: tuple[str, ...]
    """dist-info folders that could not be read."""
    platform: str | Unknown
    """platform.platform() as that interpreter sees it."""
    torch_stamp: str | None
    """A digest of torch's files (None when torch is not importable): the key of the torch cache."""


def fetch_interpreter(python: Path, *, timeout: float, environ: Mapping[str, str] | None = None) -> Interpreter:
    """Run `python` once; raises UsageError when it cannot be run at all."""
    env = os.environ if environ is None else environ
    result = run([str(python), "-c", CHILD, *pythonpath_entries(env)], timeout=timeout, env=child_env(env))
    return parse_interpreter(result, python=python)


def parse_interpreter(result: RunResult, *, python: Path) -> Interpreter:
    """Python facts, distributions sorted by name, and the dist-info folders that were unreadable."""
    data = marked_json(result, MARK)
    if data is None:
        why = result.problem or "it printed nothing compat could read"
        raise UsageError(f"cannot inspect the interpreter {python}: {why}")
    try:
        markers = {str(k): str(v) for k, v in data["markers"].items()}
        glibc = data.get("glibc")
        py = Python(
            version=str(data["version"]),
            implementation=str(data["implementation"]),
            executable=str(data["executable"]) if data.get("executable") else Unknown(reason="the interpreter did not report its path"),
            markers=markers,
            glibc=str(glibc) if glibc else None,
        )
        dists = tuple(
            sorted(
                (
                    Distribution(
                        name=str(d["name"]),
                        version=str(d["version"]),
                        requires=tuple(str(r) for r in d["requires"]),
                        installer=d.get("installer"),
                    )
                    for d in data["distributions"]
                ),
                key=lambda d: d.name,
            )
        )
        broken = tuple(sorted(str(b) for b in data.get("broken", ())))
        stamp = data.get("torch_stamp")
        digest = None
        if stamp:
            blob = json.dumps([str(py.executable), stamp], sort_keys=True).encode()
            digest = hashlib.sha256(blob).hexdigest()
        platform_text = data.get("platform")
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"cannot inspect the interpreter {python}: unexpected report ({exc})") from exc
    return Interpreter(
        python=py,
        distributions=dists,
        broken=broken,
        platform=str(platform_text) if platform_text else Unknown(reason="the interpreter did not report its platform"),
        torch_stamp=digest,
    )


