"""`compat lock --verify`'s install: the locked set into a throwaway venv with uv, the user's environment untouched.

The venv lives under the caller's folder (a temp dir removed afterwards). uv reads the indexes the
lock's own lines name and the caller's settings (index URL, find-links, offline); uv's cache is its
own, shared between runs, so a second verification installs from it.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from compat.errors import UsageError
from compat.sources.uv_compile import find_uv, last_lines


@dataclass(frozen=True, kw_only=True)
class InstallRequest:
    requirements: str
    """The lock as a requirements file (its index lines included)."""
    python_version: str
    """The lock's target Python ("3.11"): the venv is made with it."""
    index_url: str | None = None
    """The default index; None: uv's own default (or UV_INDEX_URL)."""
    find_links: tuple[str, ...] = ()
    """Folders or pages of wheels searched besides the indexes (a local torch wheel)."""
    offline: bool = False
    """Install only from uv's cache and `find_links`: nothing is fetched."""
    timeout_s: float = 900.0
    """How long creating and filling the venv may take."""


@dataclass(frozen=True, kw_only=True)
class Installed:
    python: Path
    """The new venv's interpreter."""
    seconds: float
    """Time to create and fill the venv."""


@dataclass(frozen=True, kw_only=True)
class InstallFailed:
    reason: str
    """What uv said (its last lines), or why it could not run."""
    seconds: float
    """Time until it failed."""


def check_find_links(links: tuple[str, ...]) -> None:
    """Raise UsageError for a `--find-links` that names no folder: uv would answer "no solution found", which reads
    as a lock that does not install (exit 1) when the path is mistyped. A URL is uv's to read."""
    for link in links:
        if "://" in link:
            continue
        path = Path(link)
        if not path.is_dir():
            what = "is not a directory" if path.exists() else "does not exist"
            raise UsageError(f"--find-links {link}: {what} (a folder of wheels, or a URL)")


def install_lock(request: InstallRequest, root: Path) -> Installed | InstallFailed:
    """A venv under `root` holding the locked set; never raises on uv's failure."""
    started = time.monotonic()
    uv = find_uv()
    if uv is None:
        return InstallFailed(reason="uv is not installed (compat's dependency `uv`)", seconds=0.0)
    venv = root / "venv"
    wanted = root / "requirements.txt"
    root.mkdir(parents=True, exist_ok=True)
    wanted.write_text(request.requirements, encoding="utf-8")
    common = ["--offline"] if request.offline else []
    steps = [
        [uv, "venv", "--quiet", "--python", request.python_version, *common, str(venv)],
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *common,
         *(["--index-url", request.index_url] if request.index_url else []),
         *[arg for link in request.find_links for arg in ("--find-links", link)],
         "-r", str(wanted)],
    ]
    for argv in steps:
        left = request.timeout_s - (time.monotonic() - started)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=max(left, 1.0), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return InstallFailed(reason=f"`uv {argv[1]}` ran past {request.timeout_s:g} s",
                                 seconds=round(time.monotonic() - started, 3))
        except OSError as exc:
            return InstallFailed(reason=f"cannot run uv: {exc.strerror or exc}", seconds=0.0)
        if done.returncode != 0:
            said = last_lines(done.stderr or done.stdout).replace(str(root), "<venv dir>")
            return InstallFailed(reason=f"`uv {' '.join(argv[1:3])}` failed: {said}",
                                 seconds=round(time.monotonic() - started, 3))
    return Installed(python=venv / "bin" / "python", seconds=round(time.monotonic() - started, 3))
