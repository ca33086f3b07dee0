"""`compat explain`: which known failure a log shows, why, and how to fix it here."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import typer

from compat.cli import app
from compat.cli._common import (
    AccelerateOpt, DriverOpt, FactsOpt, GpusOpt, JsonOpt, LauncherOpt, MatrixOpt, PythonOpt,
    ScriptOpt, gather, load_matrix_for,
)
from compat.errors import CompatError, UsageError

_GZIP_MAGIC = b"\x1f\x8b"


@app.command()
def explain(
    log: str = typer.Argument("-", help="Log file (plain or .gz); '-' reads standard input."),
    json_out: JsonOpt = False,
    top: Optional[int] = typer.Option(None, "--top", min=1, help="Show at most N matches."),
    no_env: bool = typer.Option(False, "--no-env", help="Do not probe this environment; rank by the log alone."),
    python: PythonOpt = None,
    facts: FactsOpt = None,
    gpus: GpusOpt = None,
    driver: DriverOpt = None,
    launcher: LauncherOpt = None,
    accelerate_config: AccelerateOpt = None,
    script: ScriptOpt = None,
    matrix: MatrixOpt = None,
) -> None:
    """Match an error log against the catalog of known failures, best first, with the fix for this environment.

    Exit code: 0 a known failure matched, 1 nothing known, 2 usage or data error.
    """
    from compat.explain.match import explain as run_explain
    from compat.report.explain import render_json, render_text

    m = load_matrix_for(matrix)
    env, note = _environment(m, no_env=no_env, python=python, facts=facts, gpus=gpus, driver=driver,
                             launcher=launcher, accelerate_config=accelerate_config, script=script)
    result = run_explain(_read_log(log), m, env, environment=note)
    render = render_json if json_out else render_text
    sys.stdout.write(render(result, top=top))
    raise typer.Exit(0 if result.known else 1)


def _environment(matrix, *, no_env: bool, python, facts, **declared):
    explicit = python is not None or facts is not None or any(v is not None for v in declared.values())
    if no_env and not explicit:
        return None, "environment not used (--no-env)"
    try:
        env = gather(matrix, python=python, facts=facts, **declared)
    except CompatError:
        if explicit:
            raise  # the user named the environment: a bad --facts file is their error to see
        return None, "environment not probed: the probe failed"
    except Exception as exc:  # noqa: BLE001 - a probe bug must never hide the log's answer
        if explicit:
            raise
        return None, f"environment not probed ({type(exc).__name__})"
    source = f"facts from {facts}" if facts is not None else (f"interpreter {python}" if python else "this environment")
    return env, f"ranked for {source}"


def _read_log(log: str) -> Iterator[bytes]:
    """Blocks of whole lines from a file, a gzip file or standard input; read errors become
    one-line usage errors."""
    import gzip
    import zlib

    from compat.explain.scan import read_blocks

    if log == "-":
        stream = sys.stdin.buffer
        name = "standard input"
    else:
        path = Path(log)
        name = str(path)
        if path.is_dir():
            raise UsageError(f"{name} is a directory, not a log file")
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc
    try:
        head = stream.peek(2)[:2] if hasattr(stream, "peek") else b""
        if head == _GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
        yield from read_blocks(stream)
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from exc
    finally:
        if log != "-":
            stream.close()
