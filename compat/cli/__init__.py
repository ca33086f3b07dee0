"""The command line: arguments in, one library call, a rendered result out, an exit code.

This package is the only place that prints, exits or configures logging. Each command lives
in its own module; heavy imports happen inside the command so `compat --help` stays instant.
"""

from __future__ import annotations

import sys

import typer

from compat import __version__
from compat.errors import CompatError

app = typer.Typer(
    name="compat",
    help="Check an LLM post-training environment (TRL, vLLM, torch, CUDA, GPUs) against a curated compatibility matrix.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"compat {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """compat: environment compatibility resolver for LLM post-training."""


INTERNAL_ERROR = 3
"""The exit code of a crash of compat itself: 0, 1 and 2 are verdicts and usage errors, never this."""


def main() -> None:
    from compat.cli._output import SafeStream

    # Every byte printed passes the one filter: no control sequence from an input, no secret.
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        _main()
    finally:
        sys.stdout, sys.stderr = out, err


def _main() -> None:
    try:
        app()
    except CompatError as exc:
        typer.echo(f"compat: error: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("compat: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # `compat lock ... | head`: the reader left; nothing more to say.
        sys.stderr.close()
        sys.exit(0)
    except Exception as exc:
        # A bug in compat: one line, and a code that no verdict uses (a CI step must not read 1 as "findings").
        where = _innermost(exc)
        typer.echo(
            f"compat: internal error: {type(exc).__name__}: {_one_line(str(exc))[:300]}{where} "
            f"(a bug in compat; please report it with the output of `compat facts`)",
            err=True,
        )
        sys.exit(INTERNAL_ERROR)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _innermost(exc: BaseException) -> str:
    """Where it failed: the innermost frame in compat's own code (else the innermost of all)."""
    import os

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tb, where = exc.__traceback__, None
    while tb is not None:
        if where is None or os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(package + os.sep):
            where = tb
        tb = tb.tb_next
    if where is None:
        return ""
    code = where.tb_frame.f_code
    path = os.path.abspath(code.co_filename)
    name = "compat/" + os.path.relpath(path, package) if path.startswith(package + os.sep) else os.path.basename(path)
    return f" at {name}:{where.tb_lineno} in {code.co_name}"


# Register the commands (each module adds its own to `app`).
from compat.cli import commands  # noqa: E402,F401
