"""The request records `compat explain` needs: FactsRequest, the base of every command's request, and ExplainRequest.

Apart from compat.api.requests (which re-exports both) so that explaining a log creates two request classes, not
the seventeen of every command: each frozen dataclass costs its generated methods' compilation at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from compat.sources.declared import Declared
from compat.sources.environment import Environment
from compat.sources.settings import Settings


@dataclass(frozen=True, kw_only=True)
class FactsRequest:
    environment: Environment = field(default_factory=Environment)
    """Where the facts come from."""
    declared: Declared = field(default_factory=Declared)
    """GPUs, driver and launcher given by the caller, laid over the probed or saved ones."""
    matrix: tuple[Path, ...] = ()
    """Overlay directories laid over the shipped matrix."""
    settings: Settings = field(default_factory=Settings)
    """Cache directory and package index."""
    config: Path | None = None
    """A config file to read (compat.toml, or a pyproject.toml with `[tool.compat]`): its declared
    hardware (gpus, driver, launcher) applies where `declared` gives none, for every command."""
    find_config: bool = False
    """Look for the config file upward from the working directory (the CLI does, unless --no-config)."""


@dataclass(frozen=True, kw_only=True)
class ExplainRequest(FactsRequest):
    use_environment: bool = True
    """False: rank by the log alone unless the environment is named (`--no-env`)."""
    offline: bool = False
    """Read nothing from the package index: a package the shipped API index lacks is answered from the cache alone."""
    index_url: str | None = None
    """The package index a package the shipped API index lacks is indexed from; None: settings.index_url (PIP_INDEX_URL)."""
    index_budget: float = 20.0
    """Seconds allowed to the package index for that (`compat.timeline.ondemand.DEFAULT_BUDGET`); 0 reads nothing."""
