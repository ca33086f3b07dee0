"""compat's typer application: the root options and every command's module registered on it (only the one a
process runs, when compat.entry knows it). Imported on first use of `compat.cli.app`: `compat explain` on plain
arguments runs without typer (compat.cli._fast_explain)."""

from __future__ import annotations

import typer

from compat import __version__
from compat.cli import _coercion, _debug


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


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="On an internal error (exit 3), print its traceback too (or COMPAT_DEBUG=1)."),
) -> None:
    """compat: environment compatibility resolver for LLM post-training."""
    _debug[0] = _debug[0] or debug


# Register the commands (each module adds its own to `app`): only the one a process runs, when compat.entry knows it.
from compat import entry  # noqa: E402
from compat.cli import commands  # noqa: E402

commands.register(entry.ONLY)
