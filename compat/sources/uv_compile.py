"""`uv pip compile`: the complete lock around compat's pins (every transitive dependency, with hashes).

compat pins the packages it tracks (the ones that break together: torch builds, vLLM, TRL, ...);
uv closes the set over everything else from the package index, with compat's pins as
constraints. This is the one place that runs uv; the index is whatever the caller names
(PIP_INDEX_URL or --index-url), never a guess.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compat.sources import children

# uv's --python-platform for compat's target platforms (manylinux_2_28: what torch's wheels need).
PLATFORMS = {
    "linux-x86_64": "x86_64-manylinux_2_28",
    "linux-aarch64": "aarch64-manylinux_2_28",
    "macos-arm64": "aarch64-apple-darwin",
    "windows-amd64": "x86_64-pc-windows-msvc",
}

# Words in uv's error output that mean the index could not be reached (not that no set exists).
# uv's words, not compat's: uv reports no error kind, and compat's own bound on it is typed
# (subprocess.TimeoutExpired in uv_compile) and never read back from a message.
_OFFLINE = ("failed to fetch", "error sending request", "connection refused", "dns error", "network",
            "offline", "timed out", "could not connect", "tcp connect error")


@dataclass(frozen=True, kw_only=True)
class CompileRequest:
    requirements: tuple[str, ...]
    """What to install (the lock's targets)."""
    constraints: tuple[str, ...]
    """compat's pins, as `name==version[+local]` lines."""
    python_version: str
    """Target Python ("3.11")."""
    platform: str
    """compat's platform name ("linux-x86_64")."""
    index_url: str | None
    """The default index; None: uv's own default."""
    extra_index_urls: tuple[str, ...] = ()
    """The PyTorch wheel indexes the pinned builds come from."""
    pylock: bool = False
    """PEP 751 pylock.toml instead of a requirements file."""
    exclude_newer: str | None = None
    """Only files uploaded on or before this date."""
    timeout_s: float = 300.0
    """How long uv may take."""


@dataclass(frozen=True, kw_only=True)
class Compiled:
    text: str
    """uv's output file, hashes included."""


@dataclass(frozen=True, kw_only=True)
class CompileFailed:
    offline: bool
    """The index could not be reached (or uv is missing): only the tracked pins are known."""
    message: str
    """uv's own explanation, its last lines."""


def find_uv() -> str | None:
    """The uv executable: the one installed with compat (the `uv` package), else one on PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def uv_compile(request: CompileRequest, *, uv: str | None = None) -> Compiled | CompileFailed:
    """Run `uv pip compile --generate-hashes` on the request; never raises on a uv failure."""
    exe = uv or find_uv()
    if exe is None:
        return CompileFailed(offline=True, message="uv is not installed (pip install uv)")
    with tempfile.TemporaryDirectory(prefix="compat-uv-") as tmp:
        folder = Path(tmp)
        reqs = folder / "requirements.in"
        cons = folder / "constraints.txt"
        out = folder / ("pylock.toml" if request.pylock else "requirements.txt")
        reqs.write_text("".join(f"{line}\n" for line in request.requirements))
        cons.write_text("".join(f"{line}\n" for line in request.constraints))
        cmd = [exe, "pip", "compile", str(reqs), "-c", str(cons), "-o", str(out), "--generate-hashes", "--quiet",
               "--no-header", "--python-version", request.python_version,
               "--python-platform", PLATFORMS.get(request.platform, PLATFORMS["linux-x86_64"]),
               # torch's builds live on the PyTorch index; the rest on the default one.
               "--index-strategy", "unsafe-best-match", "--no-config"]
        if request.pylock:
            cmd += ["--format", "pylock.toml"]
        if request.index_url:
            cmd += ["--index-url", request.index_url]
        for url in request.extra_index_urls:
            cmd += ["--extra-index-url", url]
        if request.exclude_newer:
            cmd += ["--exclude-newer", request.exclude_newer]
        try:
            # A session of its own, registered, so that a SIGTERM to compat ends uv too (compat.sources.children).
            proc = children.spawn(lambda: subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                           stderr=subprocess.PIPE, text=True, cwd=folder,
                                                           start_new_session=True))
        except OSError as exc:
            return CompileFailed(offline=True, message=f"uv could not be run: {exc}")
        try:
            _, stderr = proc.communicate(timeout=request.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return CompileFailed(offline=True, message=f"uv pip compile took more than {request.timeout_s:.0f} s")
        finally:
            children.ended(proc.pid)
        if proc.returncode != 0 or not out.is_file():
            return CompileFailed(offline=is_offline(stderr), message=last_lines(stderr))
        return Compiled(text=_relative(out.read_text(), folder))


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def is_offline(stderr: str) -> bool:
    """Whether uv failed for want of the index rather than for want of a set."""
    text = stderr.lower()
    return any(word in text for word in _OFFLINE)


def last_lines(stderr: str, count: int = 6) -> str:
    lines = [line.rstrip() for line in stderr.strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:]) or "uv pip compile failed"


def _relative(text: str, folder: Path) -> str:
    """uv names its input files in `# via` comments: the temporary folder means nothing to a reader."""
    return text.replace(f"{folder}/", "").replace(str(folder), "")


def constraint_lines(pins: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """`name==version` lines for uv's -c file."""
    return tuple(f"{name}=={version}" for name, version in pins)
