"""Which environment a command judges: the project's config laid under the request, the matrix, and the facts.

Every command that judges an environment goes through here once: `configured`, then `compat.sources.gather`
for the facts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from compat.api.facts_requests import FactsRequest
from compat.sources import gather
from compat.sources.settings import Settings

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.model.config import Config
    from compat.model.facts import Facts


def matrix_for(overlays: tuple[Path, ...], settings: Settings) -> Matrix:
    """The shipped matrix with the overlays laid over it (parsed files cached under settings.cache_dir)."""
    from compat.matrix import load_matrix

    return load_matrix(overlays, cache_dir=settings.cache_dir)


def facts(request: FactsRequest) -> Facts:
    """The facts of the requested environment (`compat facts`)."""
    request, _ = configured(request)
    return gather(request.environment, request.declared, matrix_for(request.matrix, request.settings), settings=request.settings)


def read_config(path: Path | None = None, *, find: bool = True) -> Config | None:
    """The project's config: `path`, else (with `find`) the nearest one upward from the working directory."""
    from compat.sources.config import find_config, load_config

    if path is None and find:
        path = find_config()
    return load_config(path) if path is not None else None


_R = TypeVar("_R", bound=FactsRequest)


def configured(request: _R) -> tuple[_R, Config | None]:
    """The request with the project's config laid under it, and the config (None: none read).

    One config for every command: doctor, report, facts, explain, lock and plan all take the
    hardware declared there; what the request declares wins."""
    config = read_config(request.config, find=request.find_config)
    return (request if config is None else _with_config(request, config)), config


def _with_config(request: _R, config: Config) -> _R:
    """Declared hardware from the config where the request declares none (the command line wins)."""
    from dataclasses import replace

    d = request.declared
    return replace(request, declared=replace(
        d,
        gpus=d.gpus if d.gpus is not None else config.gpus,
        driver=d.driver if d.driver is not None else config.driver,
        launcher=d.launcher if d.launcher is not None else config.launcher,
    ))


def named_python(request: FactsRequest, env: Facts) -> str | None:
    """The judged interpreter when --python named it (an interpreter or an environment directory):
    fix commands then run it (`ENV/bin/python -m pip`), not whichever `pip` is first on PATH."""
    python = env.python.executable if request.environment.python is not None else None
    return python if isinstance(python, str) else None
