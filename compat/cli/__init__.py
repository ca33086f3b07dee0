"""The command line: arguments in, one library call, a rendered result out, an exit code.

This package is the only place that prints, exits or configures logging. Each command lives
in its own module; heavy imports happen inside the command so `compat --help` stays instant.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from compat.cli.exit_codes import ExitCode
from compat.errors import CompatError

if TYPE_CHECKING:
    import typer


_debug = [False]
"""Whether an internal error prints its traceback (`--debug`, or COMPAT_DEBUG=1 read through the settings)."""

INTERNAL_ERROR = ExitCode.INTERNAL_ERROR
"""The exit code of a crash of compat itself: 0, 1 and 2 are verdicts and usage errors, never this."""


def __getattr__(name: str) -> Any:
    """`compat.cli.app`, compat's typer application, built on first use (compat.cli._app)."""
    if name == "app":
        from compat.cli._app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
                _echo(f"compat: error: cannot write the output: {exc.strerror or exc}")
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


def _main(entry: typer.Typer | None = None, prog_name: str = "compat") -> None:
    """Run `entry` (compat's app when None, or `python -m compat.fleet`'s) under the one last resort."""
    try:
        code = _run(entry, prog_name)
    except CompatError as exc:
        _echo(f"compat: error: {_one_line(str(exc))}")
        sys.exit(ExitCode.USAGE)
    except _typer_error("UsageError") as exc:
        sys.exit(_usage_error(exc))
    except _typer_error("Abort"):
        _echo("compat: interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        _echo("compat: interrupted")
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
        _echo(
            f"compat: internal error: {type(exc).__name__}: {_one_line(str(exc))[:300]}{where} "
            f"(a bug in compat; please report it with the output of `compat facts`)",
        )
        sys.exit(INTERNAL_ERROR)
    sys.exit(code if isinstance(code, int) else 0)


def _run(entry: typer.Typer | None, prog_name: str) -> object:
    """What `entry` returns; for compat's own app, `compat explain` on plain arguments is run without typer (its
    import and the building of the command's options are most of what a pasted log costs besides the log)."""
    if entry is None:
        from compat import entry as process

        if process.ONLY == "explain" and sys.argv[1:2] == ["explain"]:
            from compat.cli._fast_explain import run_plain

            code = run_plain(sys.argv[2:])
            if code is not None:
                return code
        from compat.cli._app import app

        entry = app
    # standalone_mode=False: usage errors reach us, so every error is one line in the same form.
    return entry(standalone_mode=False, prog_name=prog_name)


def _typer_error(name: str) -> type[Exception] | tuple[()]:
    """typer's usage error (a bad option or value) or its Abort; nothing to catch where typer was never imported."""
    typer = sys.modules.get("typer")
    if typer is None:
        return ()
    if name == "Abort":
        return typer.Abort
    # whichever click typer ships with
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def _echo(text: str) -> None:
    """`text` and a newline on standard error, as typer.echo writes it (typer's when typer is imported)."""
    typer = sys.modules.get("typer")
    if typer is not None:
        typer.echo(text, err=True)
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


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
        import typer

        typer.echo(ctx.get_help())  # `compat` or `compat matrix` alone: the help, as before
        return ExitCode.USAGE
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _echo(f"compat: error: {message}{where}")
    return ExitCode.USAGE
