"""The command line: arguments in, one library call, a rendered result out, an exit code.

This package is the only place that prints, exits or configures logging. Each command lives
in its own module; heavy imports happen inside the command so `compat --help` stays instant.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from compat import __version__
from compat.cli import _coercion
from compat.cli.exit_codes import ExitCode
from compat.errors import CompatError


def _plain_argument_help() -> None:
    """typer 0.2x prints an argument's Python type beside its name (`TARGET <list[str]>`); compat's
    arguments say what they take in their name and help, so help shows no Python type names."""
    from typer.core import TyperArgument

    if hasattr(TyperArgument, "display_type_rich"):
        TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]


_plain_argument_help()
_coercion.install()  # strings, paths and choices coerced without importing pydantic (see compat.cli._coercion)

app = typer.Typer(
    name="compat",
    help="Check an LLM post-training environment (TRL, vLLM, torch, CUDA, GPUs) against a curated compatibility matrix.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"compat {__version__}")
        raise typer.Exit()


_debug = [False]
"""Whether an internal error prints its traceback (`--debug`, or COMPAT_DEBUG=1 read through the settings)."""


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="On an internal error (exit 3), print its traceback too (or COMPAT_DEBUG=1)."),
) -> None:
    """compat: environment compatibility resolver for LLM post-training."""
    _debug[0] = _debug[0] or debug


INTERNAL_ERROR = ExitCode.INTERNAL_ERROR
"""The exit code of a crash of compat itself: 0, 1 and 2 are verdicts and usage errors, never this."""

# The command-line parser's usage error (a bad option or value), whichever click typer ships with.
_UsageError: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def main() -> None:
    from compat.cli._common import terminal
    from compat.cli._output import SafeStream, open_closed_standard_streams
    from compat.regular_file import forget_reads
    from compat.sources.children import end_children_on_signals

    open_closed_standard_streams()  # before anything opens a file that would take descriptor 0, 1 or 2
    end_children_on_signals()  # SIGTERM/SIGHUP end the probe children (nvidia-smi, interpreters) too
    forget_reads()  # -o refuses this run's inputs, not an earlier run's in the same process (tests, embedders)

    # Every byte printed passes the one filter: no control sequence from an input, no secret.
    out, err = sys.stdout, sys.stderr
    sys.stdout = SafeStream(out, colour=terminal(out).color)
    sys.stderr = SafeStream(err, colour=terminal(err).color)
    code: int | str | None = 0
    try:
        _main()
    except SystemExit as done:
        code = done.code
    finally:
        sys.stdout, sys.stderr = out, err
    sys.exit(_flushed(code))


def run() -> None:
    """The process's end of `compat` and `python -m compat` (compat.entry): `main`, then the exit without the
    interpreter's teardown.

    Freeing every module and object one by one at exit costs a tenth of what `compat explain` on a pasted log costs
    (25 ms of 230). What teardown would do that matters is done here first: the exit handlers run (thread pools
    and temporary directories) and both streams are flushed. A thread other than the main one still running
    gets the ordinary exit, which waits for it, and so does a process that a profiler or a tracer watches.
    """
    import atexit
    import os
    import threading

    try:
        main()
    except SystemExit as done:
        code = done.code
        if not (code is None or isinstance(code, int)) or threading.active_count() > 1 or _watched():
            raise
    else:
        code = 0
        if threading.active_count() > 1 or _watched():
            return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # main() has said what it could; nothing is retried at exit either
    os._exit(code or 0)


def _watched() -> bool:
    """Whether a profiler or tracer (cProfile, coverage, a debugger) runs this process: it writes what it found when
    the interpreter ends, so the process ends the ordinary way."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    # From 3.12 cProfile (and coverage's and debuggers' newer cores) register with sys.monitoring instead.
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))


def _flushed(code: int | str | None) -> int | str | None:
    """`code`, once standard output is flushed; 2 with one line when it cannot take the output.

    Python flushes at exit too, and a failure there is exit 120 with a traceback-like message:
    after a failed flush the descriptor is pointed at the null device so that nothing is retried.
    """
    import os

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _to_null(os, sys.stdout)
        return code  # the reader left (`| head -1`): quiet, as before
    except OSError as exc:
        _to_null(os, sys.stdout)
        if code != 2:  # 2: the error is said already (a write failed before the end, or a usage error)
            try:
                typer.echo(f"compat: error: cannot write the output: {exc.strerror or exc}", err=True)
            except OSError:
                pass
        return 2
    return code


def _to_null(os: Any, stream: Any) -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


def _main(entry: typer.Typer = app, prog_name: str = "compat") -> None:
    """Run `entry` (compat's app, or `python -m compat.fleet`'s) under the one last resort."""
    try:
        # standalone_mode=False: usage errors reach us, so every error is one line in the same form.
        code = entry(standalone_mode=False, prog_name=prog_name)
    except CompatError as exc:
        typer.echo(f"compat: error: {_one_line(str(exc))}", err=True)
        sys.exit(ExitCode.USAGE)
    except _UsageError as exc:
        sys.exit(_usage_error(exc))
    except typer.Abort:
        typer.echo("compat: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        typer.echo("compat: interrupted", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # `compat lock ... | head`: the reader left; nothing more to say.
        import os

        _to_null(os, sys.stdout)
        sys.exit(0)
    except Exception as exc:
        # The one last resort: a bug in compat is one line, and a code that no verdict uses (a CI step must not
        # read 1 as "findings"); with --debug or COMPAT_DEBUG=1 its traceback comes first, for the report.
        if _debug[0] or _debug_from_environment():
            import traceback

            traceback.print_exc(file=sys.stderr)
        where = _innermost(exc)
        typer.echo(
            f"compat: internal error: {type(exc).__name__}: {_one_line(str(exc))[:300]}{where} "
            f"(a bug in compat; please report it with the output of `compat facts`)",
            err=True,
        )
        sys.exit(INTERNAL_ERROR)
    sys.exit(code if isinstance(code, int) else 0)


def _debug_from_environment() -> bool:
    try:
        from compat.sources.settings import read_settings

        return read_settings().debug
    except CompatError:
        return False  # a bad setting elsewhere must not hide the error being reported


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


def _usage_error(exc: Exception) -> int:
    """`compat: error: <what> (see 'compat doctor --help')` on one line; exit 2."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        typer.echo(ctx.get_help())  # `compat` or `compat matrix` alone: the help, as before
        return ExitCode.USAGE
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    typer.echo(f"compat: error: {message}{where}", err=True)
    return ExitCode.USAGE


# Register the commands (each module adds its own to `app`): only the one a process runs, when compat.entry knows it.
from compat import entry  # noqa: E402
from compat.cli import commands  # noqa: E402

commands.register(entry.ONLY)
