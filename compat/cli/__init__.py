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


def main() -> None:
    try:
        app()
    except CompatError as exc:
        typer.echo(f"compat: error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("compat: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # `compat lock ... | head`: the reader left; nothing more to say.
        sys.stderr.close()
        sys.exit(0)


# Register the commands (each module adds its own to `app`).
from compat.cli import commands  # noqa: E402,F401
