"""The command modules: each registers its commands on the app when it is imported."""

from importlib import import_module

MODULES = {
    "doctor": "doctor", "report": "doctor", "facts": "doctor", "explain": "explain", "fleet": "fleet", "lock": "lock",
    "plan": "lock", "matrix": "matrix", "smoke": "smoke",
}
"""Each command (or group) of `compat` and the module under compat.cli that registers it."""

ORDER = tuple(dict.fromkeys(MODULES.values()))
"""The modules in the order their commands are listed in `compat --help`."""


def register(only: str | None = None) -> None:
    """Import the module of command `only` when it names one (a process that runs that command needs no other: typer
    builds every registered command's options before it runs one), else every command module."""
    for module in (MODULES[only],) if only in MODULES else ORDER:
        import_module(f"compat.cli.{module}")
