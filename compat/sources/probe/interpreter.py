"""The target interpreter and its installed distributions, read by running it once (compat's own
interpreter is read in-process instead, with the same report: see `own_search_path`).

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
from typing import Any

from compat.errors import UsageError
from compat.model.facts import Distribution, Python
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult, marked_json, run
from compat.sources.probe.interpreter_report import MARK, NO_PACKAGES

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


_REPORT = Path(__file__).with_name("interpreter_report.py")


def child_script() -> str:
    """The child's program: SAFE_PATH, then interpreter_report.py's text and its `main` on the PYTHONPATH entries."""
    return SAFE_PATH + _REPORT.read_text(encoding="utf-8") + "\nmain(sys.argv[1:])\n"


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
    torch_dir: Path | None = None
    """The directory `import torch` would load torch from (None when it is not importable): its files are read first."""


def fetch_interpreter(
    python: Path, *, timeout: float, environ: Mapping[str, str] | None = None, packages: bool = True,
) -> Interpreter:
    """Read `python`'s report: in this process when `python` is the interpreter running compat (see
    `own_search_path`), else by running it once; raises UsageError when it cannot be run at all.

    `packages` False: the interpreter alone (no distributions, no torch stamp), for a requirements file."""
    env = os.environ if environ is None else environ
    # Another environment than this process's own (a caller's) may start the interpreter differently: run it.
    search = own_search_path(python, env) if environ is None else None
    if search is not None:
        from compat.sources.probe.interpreter_report import collect

        return parse_report(collect([], search, packages=packages), python=python)
    return fetch_interpreter_child(python, timeout=timeout, environ=env, packages=packages)


def fetch_interpreter_child(
    python: Path, *, timeout: float, environ: Mapping[str, str], packages: bool = True,
) -> Interpreter:
    """Run `python` once with the report's script; raises UsageError when it cannot be run at all."""
    mode = [] if packages else [NO_PACKAGES]
    argv = [str(python), "-c", child_script(), *mode, *pythonpath_entries(environ)]
    return parse_interpreter(run(argv, timeout=timeout, env=child_env(environ)), python=python)


def own_search_path(python: Path, environ: Mapping[str, str]) -> list[str] | None:
    """The sys.path a child of `python` would have, when that child would be this very process's interpreter
    started the same way; None when a child must be run.

    Same interpreter: the same sys.executable text (the child reports it) and realpath, and the same sys.prefix
    (a venv's symlink to the same binary is another environment). Started the same way: the child runs with no
    flags and without PYTHONPATH, so this process must have none of the flags that change sys.path (-I, -S, -s,
    -E, -P) and no PYTHONPATH; then its sys.path is the child's plus the one entry Python put first (the script's
    directory, or the current one for -m), which the child's SAFE_PATH takes out too.
    """
    import sys

    if os.path.abspath(python) != sys.executable or os.path.realpath(python) != os.path.realpath(sys.executable):
        return None
    if not _same_prefix(python):
        return None
    flags = sys.flags
    user_site_off = bool(environ.get("PYTHONNOUSERSITE"))
    if flags.isolated or flags.no_site or flags.ignore_environment or getattr(flags, "safe_path", False):
        return None
    if bool(flags.no_user_site) != user_site_off or environ.get("PYTHONPATH"):
        return None
    if not sys.path or not _python_put_first(sys.path[0], sys.argv):
        return None  # a caller put its own entry first (a test runner, an embedding program): ask a child
    return list(sys.path[1:])


def _python_put_first(entry: str, argv: list[str]) -> bool:
    # What Python itself prepends: "" for -c and the prompt, the current directory for -m, the script's directory.
    if entry in ("", os.getcwd()):
        return True
    script = argv[0] if argv else ""
    return bool(script) and entry == os.path.dirname(os.path.realpath(script))


def _same_prefix(python: Path) -> bool:
    # pyvenv.cfg beside or above the binary makes its directory the prefix; compat's own sys.prefix must be that.
    import sys

    for root in (python.parent, python.parent.parent):
        if (root / "pyvenv.cfg").is_file():
            return os.path.realpath(root) == os.path.realpath(sys.prefix)
    return sys.prefix == sys.base_prefix


def parse_interpreter(result: RunResult, *, python: Path) -> Interpreter:
    """Python facts, distributions sorted by name, and the dist-info folders that were unreadable."""
    data = marked_json(result, MARK)
    if data is None:
        # "not found" alone: the run's own wording repeats the path's last part, which the message names whole
        # already, and which alone no longer looks like the URL whose credentials redaction masks (`--python URL`)
        why = "not found" if result.not_found else result.problem or "it printed nothing compat could read"
        raise UsageError(f"cannot inspect the interpreter {python}: {why}")
    return parse_report(data, python=python)


def parse_report(data: dict[str, Any], *, python: Path) -> Interpreter:
    """The report of interpreter_report.collect, read from the child's line or in-process (pure)."""
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
        torch_dir = Path(str(data["torch_dir"])) if data.get("torch_dir") else None
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"cannot inspect the interpreter {python}: unexpected report ({exc})") from exc
    return Interpreter(
        python=py,
        distributions=dists,
        broken=broken,
        platform=str(platform_text) if platform_text else Unknown(reason="the interpreter did not report its platform"),
        torch_stamp=digest,
        torch_dir=torch_dir,
    )


