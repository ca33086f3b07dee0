"""The frozen request and result records of the library API, one per command.

A request says everything a command needs (the environment, the declared hardware, settings): the
functions that take them read nothing else of the process.

FactsRequest and ExplainRequest live in compat.api.facts_requests (explaining a log needs no other) and are
re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from compat.api.facts_requests import ExplainRequest as ExplainRequest  # re-exported
from compat.api.facts_requests import FactsRequest
from compat.errors import ResolutionError
from compat.model.config import Config, Waivers
from compat.model.facts import Facts
from compat.model.findings import Finding, Severity
from compat.model.installer import Installer
from compat.sources.environment import Environment as Environment  # re-exported
from compat.sources.settings import Settings

if TYPE_CHECKING:  # the smoke's model costs every other command's start-up 58 ms to import
    from compat.model.smoke import Stage


@dataclass(frozen=True, kw_only=True)
class DoctorRequest(FactsRequest):
    fail_on: Severity | None = Severity.ERROR
    """A finding of this severity or worse makes the result `failed`; None: the config's `fail-on`, else error."""
    strict: bool = False
    """A check at that severity that could not run also makes it `failed`."""
    today: date | None = None
    """The date ignore expiries are compared with; None: today."""
    report_url: str | None = None
    """Base URL of the finding pages; None: the config's `report-url`, else COMPAT_REPORT_URL."""
    feature_links: bool = False
    """Also report the imports that break only a feature (guarded, lazy, on-demand; info)."""


@dataclass(frozen=True, kw_only=True)
class DoctorResult:
    facts: Facts
    """The environment that was judged."""
    findings: tuple[Finding, ...]
    """What is wrong or at risk, most severe first."""
    failed: bool
    """Some finding reaches the request's `fail_on` (the CLI exits 1)."""
    waivers: Waivers = field(default_factory=Waivers)
    """What the config's ignore list did (ignored findings are not in `findings`)."""
    config: Config | None = None
    """The config file that was applied, if any."""
    fail_on: Severity = Severity.ERROR
    """The threshold that was applied (the request's, else the config's)."""
    strict: bool = False
    """Whether undecided checks at the threshold counted."""
    report_url: str | None = None
    """Base URL of the finding pages (from the request, the config or COMPAT_REPORT_URL); None: no links."""


@dataclass(frozen=True, kw_only=True)
class LockRequest(FactsRequest):
    targets: tuple[str, ...]
    """Requirements to lock: "trl[vllm]", "vllm>=0.7.2", "flash-attn"."""
    python_version: str | None = None
    """Target Python ("3.11"); None: the inspected interpreter's."""
    platform: str | None = None
    """Target platform (linux-x86_64, ...); None: the inspected interpreter's."""
    prefer_installed: bool = False
    """Prefer the installed version of each package."""
    minor_compat: bool = False
    """Accept torch builds that run on the driver only under CUDA minor-version compatibility."""
    exclude_newer: str | None = None
    """Only releases uploaded on or before this date (YYYY-MM-DD), as uv's --exclude-newer."""
    full: bool = False
    """Close the set over every transitive dependency with `uv pip compile` (hashes included)."""
    pylock: bool = False
    """With `full`: a PEP 751 pylock.toml instead of a requirements file."""
    index_url: str | None = None
    """The index uv reads for `full`; None: settings.index_url (PIP_INDEX_URL), else uv's default."""
    allow_partial: bool = False
    """With `full`: when uv cannot reach the index, return the tracked pins alone instead of an error."""


@dataclass(frozen=True, kw_only=True)
class PlanRequest(FactsRequest):
    targets: tuple[str, ...] = ()
    """Where to go; empty: the installed top-level tracked packages, with the findings' fixes."""
    latest: bool = False
    """Newest compatible versions instead of keeping what is installed."""
    minor_compat: bool = False
    """Accept torch builds that run on the driver only under CUDA minor-version compatibility."""
    installer: Installer = Installer.PIP
    """Commands for pip or uv."""


@dataclass(frozen=True, kw_only=True)
class Conflict:
    """No compatible set: the targets that were resolved and the resolver's error."""

    targets: tuple[str, ...]
    """Everything that was asked of the resolver (plan adds the findings' fixes to the caller's targets)."""
    error: ResolutionError
    """Why no set fits (its causes)."""


@dataclass(frozen=True, kw_only=True)
class ShowRequest:
    package: str
    """A tracked package."""
    since: str | None = None
    """Only releases at or after this version (checked here; the renderer filters)."""
    matrix: tuple[Path, ...] = ()
    """Overlay directories whose releases/ extend the shipped ones."""
    settings: Settings = field(default_factory=Settings)
    """Cache directory (parsed release files)."""


@dataclass(frozen=True, kw_only=True)
class ValidateRequest:
    directory: Path | None = None
    """A matrix directory to check as an overlay on the shipped one."""
    alone: bool = False
    """Check `directory` by itself, without the shipped matrix."""
    audit: bool = True
    """Run the signature regex backtracking audit."""


@dataclass(frozen=True, kw_only=True)
class SiteRequest:
    out: Path
    """Directory the pages are written to (created if missing; compat's pages in it are replaced)."""
    matrix: tuple[Path, ...] = ()
    """Overlay directories laid over the shipped matrix."""
    settings: Settings = field(default_factory=Settings)
    """Cache directory (parsed release files)."""


@dataclass(frozen=True, kw_only=True)
class SiteResult:
    out: Path
    """Where the site was written."""
    pages: int
    """How many pages."""
    size: int
    """Their total size in bytes."""
    signatures: int
    """How many signature pages."""


@dataclass(frozen=True, kw_only=True)
class RefreshRequest:
    packages: tuple[str, ...] = ()
    """Packages to refresh; empty: every tracked package."""
    index_url: str | None = None
    """Simple API root; None: settings.index_url."""
    out: Path | None = None
    """Directory of the releases files; None: the shipped matrix/releases."""
    cache_dir: Path | None = None
    """Metadata cache; None: settings.cache_dir."""
    use_cache: bool = True
    """False: read every release's metadata from the index again."""
    workers: int = 8
    """Concurrent requests."""
    timeout: float = 30.0
    """Seconds per request before retrying."""
    settings: Settings = field(default_factory=Settings)
    """Default cache directory and package index."""


@dataclass(frozen=True, kw_only=True)
class ApiRequest:
    package: str
    """A tracked package, "trl" or "trl==0.15.2" (a release is needed with `imports`)."""
    name: str | None = None
    """A name, parameter, "cli:SUB", "model_type:X" or "module:M"; None: the package's summary."""
    imports: str | None = None
    """Another tracked package: list what the release imports from it."""
    matrix: tuple[Path, ...] = ()
    """A matrix directory whose api/ replaces the shipped one (the last one given)."""


@dataclass(frozen=True, kw_only=True)
class ApiRefreshRequest:
    packages: tuple[str, ...] = ()
    """Packages to extend; empty: every package the API index covers."""
    index_url: str | None = None
    out: Path | None = None
    """The api directory to extend; None: the shipped matrix/api."""
    workers: int = 4
    timeout: float = 60.0
    limit: int | None = None
    """Extract at most the newest N releases not yet indexed (a sample)."""
    backfill: int | None = None
    """Extract again the newest N indexed releases that lack the kinds added late (`LATE_KINDS`)."""
    settings: Settings = field(default_factory=Settings)


@dataclass(frozen=True, kw_only=True)
class FleetRequest:
    """`compat fleet`: where the members' facts come from, and how they are judged."""

    directory: Path | None = None
    """Saved snapshots, one `compat facts` file per node (Slurm, Kubernetes, an earlier --save)."""
    slurm: bool = False
    """Inside a Slurm allocation: srun `compat facts` once per node into `out` first."""
    ray: str | None = None
    """A Ray cluster's address: a facts task pinned to every alive node."""
    out: Path | None = None
    """Where --slurm writes the nodes' files (a shared directory); --ray and torchrun save them there."""
    baseline: Path | None = None
    """A known-good snapshot directory of the same cluster: report what changed since."""
    world_size: int | None = None
    """The launcher's world size, checked against the GPUs (torchrun and --slurm know it themselves)."""
    timeout: float = 120.0
    """Seconds allowed to gathering (per srun run, per Ray task, per rank)."""
    smoke: bool = False
    """torch.distributed only: a short all-reduce on the job's real backend."""
    smoke_bytes: int = 8 * 2**20
    """Bytes per all-reduce of the smoke test."""
    smoke_timeout: float = 30.0
    """Seconds allowed to the smoke test."""
    node_smoke: bool = False
    """`compat fleet --smoke`: `compat smoke` on every node, each node's stages in the report. With `directory`: the
    reports in `directory/smoke/NODE.json`; with `slurm`: run now by one srun step. Not with `ray`."""
    node_smoke_budget: float = 600.0
    """Each node's `compat smoke --budget` under --slurm (the srun step gets a minute more)."""
    fail_on: Severity | None = Severity.ERROR
    """A difference or finding of this severity or worse makes the result `failed`; None: the config's
    `fail-on`, else error."""
    strict: bool = False
    """A check at that severity that could not run also makes it `failed` (or the config's `strict`)."""
    matrix: tuple[Path, ...] = ()
    """Overlay directories laid over the shipped matrix."""
    settings: Settings = field(default_factory=Settings)
    """Cache directory."""
    config: Path | None = None
    """A config file to read for `fail-on` and `strict` (the nodes' hardware is their own, never declared)."""
    find_config: bool = False
    """Look for the config file upward from the working directory (the CLI does, unless --no-config)."""


@dataclass(frozen=True, kw_only=True)
class SmokeRequest(FactsRequest):
    """`compat smoke`: run the stack of the environment doctor would judge (or `environment.python`), stage by stage."""

    trainers: tuple[str, ...] = ()
    """TRL trainers the train stage runs two steps of (sft, dpo, grpo, online-dpo); empty: those the script uses, else sft."""
    budget: float = 900.0
    """Seconds the whole run may take, the probe included; a stage that cannot start within it is skipped."""
    processes: int = 2
    """Processes of the train stage's `accelerate launch` run (1: none); an accelerate config's `num_processes` wins."""
    deepspeed: Path | None = None
    """A DeepSpeed JSON config the launched run uses (`accelerate launch --use_deepspeed --deepspeed_config_file`).
    The accelerate config, if any, is `environment.accelerate_config`."""
    stages: tuple[Stage, ...] = ()
    """The stages to run (`parse_stages` reads `--stages`); the others are skipped, saying so. Empty: every stage."""
    bytecode: bool = False
    """The children may write `__pycache__` into the judged environment: only for one compat made and removes
    (lock --verify's venv, which uv fills without bytecode). Else each child compiles every module it imports again:
    about 10 s of CPU for each child that imports the training stack."""


@dataclass(frozen=True, kw_only=True)
class VerifyRequest:
    """`compat lock --verify`: lock, install the set into a throwaway venv with uv, smoke it there."""

    lock: LockRequest
    """What to lock."""
    find_links: tuple[str, ...] = ()
    """Folders of wheels uv searches besides the indexes (a local torch wheel)."""
    offline: bool = False
    """Install only from uv's cache and `find_links`."""
    trainers: tuple[str, ...] = ()
    """The trainers the smoke's train stage runs (default: SFT)."""
    budget: float = 900.0
    """Bound on the smoke run."""
    processes: int = 2
    """Processes of the smoke's `accelerate launch` run."""
