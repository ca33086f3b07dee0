"""The target interpreter and its installed distributions, read by running it once.

The child runs with `-I` (no user site, no PYTHONPATH) and imports only the standard
library: it may be an old or minimal environment without `packaging`, and importing heavy
packages would make the probe slow and fragile.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import Distribution, Python
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult, marked_json, run

MARK = "COMPAT-INTERPRETER:"

# Kept compatible with Python 3.8 so an old venv can still be inspected.
CHILD = r'''
import json, os, platform, re, sys
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
for dist in md.distributions():
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
    except Exception as exc:
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


def fetch_interpreter(python: Path, *, timeout: float) -> Interpreter:
    """Run `python` once; raises UsageError when it cannot be run at all."""
    result = run([str(python), "-I", "-c", CHILD], timeout=timeout)
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


