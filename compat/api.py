"""The library API: one function per command, each taking a frozen request record.

The command line (compat/cli) only turns its arguments into one of these requests, renders the
result with compat/report and maps it to an exit code; a program that wants compat's answers calls
the same functions. Which environment is judged (a facts file, a live probe of this or another
interpreter, a requirements file), the lock shortcut that skips probing, and the plan workflow
are decided here, once.

Nothing here reads the process environment on its own: settings (cache directory, package index)
arrive in the request. `Settings()` means no cache and the public index; the CLI passes
`read_settings()` (compat.sources.settings, re-exported here), which reads COMPAT_CACHE_DIR,
XDG_CACHE_HOME, COMPAT_NO_CACHE and PIP_INDEX_URL.

    from compat import api

    result = api.doctor(api.DoctorRequest(
        environment=api.Environment(facts_file=Path("facts.json")),
        declared=api.Declared(gpus="8xH100", driver="550.54.15"),
    ))
    locked = api.lock(api.LockRequest(targets=("trl[vllm]",), declared=..., python_version="3.11"))
    if isinstance(locked, api.Conflict): ...   # no compatible set is an answer, not an exception

Usage errors (a bad option value, an unreadable file) raise compat.errors.UsageError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from compat.errors import CompatError, ResolutionError, UsageError
from compat.model.config import Config, Waivers
from compat.model.curation import Refreshed, Validation
from compat.model.facts import Facts
from compat.model.findings import Finding, Severity
from compat.model.fleet import FleetReport
from compat.model.fleet import Member as FleetMember
from compat.model.lock import FullLock, Installer, Lock, Plan
from compat.sources.declared import Declared
from compat.sources.settings import Settings, read_settings

if TYPE_CHECKING:
    from compat.explain.match import Explanation
    from compat.matrix import Matrix
    from compat.matrix.releases import PackageReleases
    from compat.model.smoke import Diagnosis as SmokeDiagnosis
    from compat.model.smoke import SmokeReport
    from compat.model.smoke import StageResult as SmokeStageResult
    from compat.model.smoke import Verification as SmokeVerification
    from compat.resolve import SearchBound
    from compat.timeline.links import ApiSource
    from compat.timeline.records import ApiImports, ApiLookup, ApiOutcome

__all__ = [
    "ApiRefreshRequest",
    "ApiRequest",
    "Conflict",
    "Declared",
    "DoctorRequest",
    "DoctorResult",
    "Environment",
    "ExplainRequest",
    "FactsRequest",
    "FleetRequest",
    "FullLock",
    "Installer",
    "LockRequest",
    "PlanRequest",
    "RefreshRequest",
    "Refreshed",
    "Settings",
    "ShowRequest",
    "SiteRequest",
    "SiteResult",
    "SmokeRequest",
    "ValidateRequest",
    "VerifyRequest",
    "doctor",
    "explain",
    "facts",
    "fleet",
    "fleet_torch",
    "lock",
    "lock_full",
    "lock_verify",
    "matrix_api",
    "matrix_refresh",
    "matrix_refresh_api",
    "matrix_show",
    "matrix_site",
    "matrix_validate",
    "plan",
    "read_config",
    "read_log",
    "read_settings",
    "smoke",
]


# ----------------------------------------------------------------------------- requests


@dataclass(frozen=True, kw_only=True)
class Environment:
    """Which environment is judged. Neither `facts_file` nor `python`: a live probe of the environment
    the user means (the activated venv or conda env, else the python on PATH beside an isolated
    compat, else this interpreter; compat.sources.probe.selection)."""

    facts_file: Path | None = None
    """A saved `compat facts` snapshot, read instead of probing."""
    python: Path | None = None
    """An interpreter or an environment directory to probe live."""
    requirements: Path | None = None
    """Judge the pinned set of this requirements file instead of the installed packages (live probe only)."""
    accelerate_config: Path | None = None
    """accelerate config file (default: the one under the Hugging Face home); read on this host."""
    script: Path | None = None
    """Training script to read (never run); read on this host."""
    host: bool = False
    """With `requirements`: read this machine's toolchain, launch variables and GPUs too. Without it the file is
    judged alone, and a check that needs the machine cannot be checked (the same verdict on any machine)."""

    def named(self) -> bool:
        """The caller named something about the environment (so its errors are theirs to see)."""
        return any(v is not None for v in (self.facts_file, self.python, self.requirements, self.accelerate_config, self.script))


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
class ExplainRequest(FactsRequest):
    use_environment: bool = True
    """False: rank by the log alone unless the environment is named (`--no-env`)."""


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
    settings: Settings = field(default_factory=Settings)


# ----------------------------------------------------------------------------- environment


def _matrix(overlays: tuple[Path, ...], settings: Settings) -> Matrix:
    from compat.matrix import load_matrix

    return load_matrix(overlays, cache_dir=settings.cache_dir)


def _gather(request: FactsRequest, matrix: Matrix) -> Facts:
    """Facts from a snapshot or a live probe, with declared values laid on top."""
    from compat.sources.declared import apply_declared, complete_gpus

    env = request.environment
    if env.facts_file is not None and env.python is not None:
        raise UsageError("--facts and --python both name the environment; give one")
    if env.facts_file is not None:
        base = _read_facts(env.facts_file)
        if env.script is not None or env.accelerate_config is not None:
            from compat.sources.probe import probe_launch_and_script

            base = probe_launch_and_script(base, accelerate_config=env.accelerate_config, script=env.script)
    else:
        from compat.sources.probe import ProbeRequest, probe

        base = probe(
            ProbeRequest(
                python=env.python,
                requirements=env.requirements,
                hardware=request.declared.gpus is None,  # declared GPUs: never wait on nvidia-smi in a Docker build
                host=env.requirements is None or env.host,
                accelerate_config=env.accelerate_config,
                script=env.script,
                cache_dir=request.settings.cache_dir,
                torch_timeout=request.settings.torch_timeout,
            ),
            matrix,
        )
    from compat.sources.bounds import bound_facts

    origin = str(env.facts_file) if env.facts_file is not None else "the probed environment"
    return bound_facts(apply_declared(complete_gpus(base, matrix.gpus), request.declared, matrix), origin=origin)


def _read_facts(path: Path) -> Facts:
    from compat.model.facts import load_facts
    from compat.sources.facts_file import read_text

    return load_facts(read_text(path), origin=str(path))


# ----------------------------------------------------------------------------- commands


def facts(request: FactsRequest) -> Facts:
    """The facts of the requested environment (`compat facts`)."""
    request, _ = _configured(request)
    return _gather(request, _matrix(request.matrix, request.settings))


def doctor(request: DoctorRequest) -> DoctorResult:
    """What is wrong or at risk in the environment, and whether that fails the request's threshold."""
    from compat.judge.commands import for_interpreter
    from compat.judge.diagnose import diagnose, fails
    from compat.judge.ignores import apply_ignores, fails_waivers

    request, config = _configured(request)
    m = _matrix(request.matrix, request.settings)
    env = _gather(request, m)
    threshold = request.fail_on or (config.fail_on if config else None) or Severity.ERROR
    strict = request.strict or (config.strict if config else False)
    findings = for_interpreter(diagnose(env, m, api=_installed_api(request, env, m), feature_links=request.feature_links),
                               _named_python(request, env))
    findings, waivers = apply_ignores(findings, config.ignore if config else (), request.today or date.today())
    return DoctorResult(
        facts=env,
        findings=findings,
        failed=fails(findings, threshold, strict=strict) or fails_waivers(waivers),
        waivers=waivers,
        config=config,
        fail_on=threshold,
        strict=strict,
        report_url=request.report_url or (config.report_url if config else None) or request.settings.report_url,
    )


def read_config(path: Path | None = None, *, find: bool = True) -> Config | None:
    """The project's config: `path`, else (with `find`) the nearest one upward from the working directory."""
    from compat.sources.config import find_config, load_config

    if path is None and find:
        path = find_config()
    return load_config(path) if path is not None else None


_R = TypeVar("_R", bound=FactsRequest)


def _configured(request: _R) -> tuple[_R, Config | None]:
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


def _installed_api(request: DoctorRequest, env: Facts, matrix: Matrix) -> ApiSource:
    """The API index, and for the installed releases it has not read, their files read with `ast`
    (only for a probed environment: a facts file's packages are on another machine)."""
    from compat.model.unknown import Unknown
    from compat.sources.installed_api import installed_releases, site_dirs
    from compat.timeline.links import ApiSource

    source = ApiSource(matrix.roots)
    python = env.python.executable
    if request.environment.facts_file is not None or isinstance(env.packages, Unknown) or isinstance(python, Unknown):
        return source
    tracked = set(matrix.releases.packages())
    missing = {d.name: d.public_version for d in env.packages
               if d.name in tracked and isinstance(source.release(d.name, d.public_version), Unknown)}
    if not missing:
        return source
    dirs = site_dirs(python)
    if isinstance(dirs, Unknown):
        return source
    return ApiSource(matrix.roots, dict(installed_releases(dirs, missing)))


def read_log(name: str) -> Iterator[bytes]:
    """Blocks of whole lines of a log file, a gzip file or standard input ("-"); raises UsageError lazily."""
    from compat.explain.scan import read_blocks
    from compat.sources.log_file import read_log as read

    return read(name, read_blocks)


def log_size(name: str) -> int | None:
    """Bytes of a log file as stored; None for standard input (for a progress bar)."""
    from compat.sources.log_file import log_size as size

    return size(name)


def explain(request: ExplainRequest, log: Iterable[str | bytes], progress: Callable[[int], None] | None = None) -> Explanation:
    """The known failures and root errors the log shows, ranked for the environment when there is one;
    `progress` is called with the bytes read after each block."""
    from concurrent.futures import ThreadPoolExecutor

    from compat.explain.match import rank, read_log
    from compat.sources.cache import DirectoryStore

    d = request.declared
    if request.use_environment or request.environment.named() or any(v is not None for v in (d.gpus, d.driver, d.launcher)):
        request, _ = _configured(request)  # --no-env alone stays the log alone, whatever the config declares
    m = _matrix(request.matrix, request.settings)
    cache = request.settings.cache_dir
    store = DirectoryStore(cache / "explain") if cache is not None else None
    # The probe waits on a child interpreter: it runs while the log is read, which on a pasted log halves the wait.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compat-probe") as pool:
        probed = pool.submit(_explain_environment, request, m)
        read = read_log(log, m, progress=progress, store=store)
        env, note = probed.result()
    return rank(read, m, env, environment=note)


def _explain_environment(request: ExplainRequest, matrix: Matrix) -> tuple[Facts | None, str]:
    d = request.declared
    explicit = request.environment.named() or any(v is not None for v in (d.gpus, d.driver, d.launcher))
    if not request.use_environment and not explicit:
        return None, "environment not used (--no-env)"
    try:
        env = _gather(request, matrix)
    except CompatError as exc:
        if explicit:
            raise  # the caller named the environment: a bad facts file is their error to see
        return None, f"environment not probed: {' '.join(str(exc).split())[:200]}"
    where = request.environment
    source = (
        f"facts from {where.facts_file}" if where.facts_file is not None
        else (f"interpreter {where.python}" if where.python else "this environment")
    )
    return env, f"ranked for {source}"


def lock(request: LockRequest, progress: Callable[[int, float], None] | None = None) -> Lock | Conflict:
    """A pinned set for the targets on the environment's (or the declared) hardware; `progress` is called now and
    then with the search's rounds and seconds."""
    from compat.resolve import check_targets, declared_target, require_hardware, resolve, target_facts
    from compat.sources.declared import apply_declared

    request, _ = _configured(request)
    m = _matrix(request.matrix, request.settings)
    check_targets(request.targets, m)
    d = request.declared
    no_gpu = d.gpus is not None and d.gpus.strip().lower() in ("cpu", "none")
    fully_declared = d.gpus is not None and (d.driver is not None or no_gpu) and request.python_version is not None
    if fully_declared and not (request.prefer_installed or request.environment.named()):
        # Nothing on this host matters: skip the probe (it imports torch in a child process).
        env = apply_declared(declared_target(python_version=request.python_version or "", platform=request.platform), d, m)
    else:
        env = target_facts(_gather(request, m), python_version=request.python_version, platform=request.platform)
    require_hardware(env)
    try:
        return resolve(list(request.targets), env, m, prefer_installed=request.prefer_installed, minor_compat=request.minor_compat,
                       exclude_newer=_date(request.exclude_newer), bound=_bound(request.settings, progress))
    except ResolutionError as exc:
        return Conflict(targets=request.targets, error=exc)


def _bound(settings: Settings, progress: Callable[[int, float], None] | None) -> SearchBound:
    from compat.resolve import SearchBound

    if settings.search_seconds is None:
        return SearchBound(progress=progress)
    return SearchBound(seconds=settings.search_seconds, progress=progress)


def lock_full(request: LockRequest, progress: Callable[[int, float], None] | None = None) -> FullLock | Conflict:
    """The lock, closed over every transitive dependency by `uv pip compile` with compat's pins as constraints.

    Offline (or without uv) that is a UsageError naming what is missing: a `--full` lock that
    holds only the tracked pins, unhashed, is not what was asked for. With `allow_partial` the
    result carries the tracked pins and says why; a pylock.toml cannot be written then either
    (its file hashes come from the index).
    """
    from compat.sources.uv_compile import Compiled, CompileRequest, uv_compile

    locked = lock(request, progress)
    if isinstance(locked, Conflict):
        return locked
    # Packages that compile against torch are installed afterwards, without build isolation: uv
    # would have to build them to read their metadata.
    late = {p.name for p in locked.pins if p.after_torch}
    # A build known only by its wheel's URL is asked for by that URL (a constraint cannot name one).
    wanted = tuple(t for t in request.targets if _name(t) not in late) + tuple(p.requirement() for p in locked.pins if p.wheel)
    compiled = uv_compile(CompileRequest(
        requirements=wanted,
        constraints=tuple(f"{p.name}=={p.full_version}" for p in locked.pins if p.name not in late and not p.wheel),
        python_version=locked.python_version,
        platform=locked.platform,
        index_url=request.index_url or request.settings.index_url,
        extra_index_urls=tuple(sorted({p.index_url for p in locked.pins if p.index_url})),
        pylock=request.pylock,
        exclude_newer=_date(request.exclude_newer),
    ))
    if isinstance(compiled, Compiled):
        return FullLock(lock=locked, text=compiled.text, offline=None, pylock=request.pylock)
    if not compiled.offline:
        raise UsageError(f"uv pip compile found no complete set around compat's pins:\n{compiled.message}")
    if request.pylock:
        raise UsageError(f"a pylock.toml needs the package index (file hashes), and uv could not use it:\n{compiled.message}")
    if not request.allow_partial:
        reason = compiled.message.strip().splitlines()[0] if compiled.message.strip() else "uv could not run"
        raise UsageError(f"--full is incomplete: uv pip compile could not close the set ({reason}); only compat's "
                         f"{len(locked.pins)} tracked pins are known, with no hashes and no other dependency "
                         "(--allow-partial writes them anyway)")
    return FullLock(lock=locked, text=None, offline=compiled.message)


def _name(target: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return str(canonicalize_name(Requirement(target).name))
    except InvalidRequirement:
        return target


def _date(text: str | None) -> str | None:
    """A YYYY-MM-DD date (a full RFC 3339 timestamp is cut to its day); raises UsageError."""
    import datetime

    if text is None:
        return None
    try:
        return datetime.date.fromisoformat(text.strip()[:10]).isoformat()
    except ValueError:
        raise UsageError(f"--exclude-newer {text!r}: expected a date (2025-03-01)") from None


def plan(request: PlanRequest, progress: Callable[[int, float], None] | None = None) -> Plan | Conflict:
    """The ordered steps from the installed environment to a good set: diagnose, choose the targets
    (the installed tracked packages by default) plus the findings' fixes, resolve, then plan."""
    from compat.judge.diagnose import diagnose
    from compat.matrix.releases import TRACKED
    from compat.resolve import check_targets, resolve_from_installed, target_facts
    from compat.resolve.plan import default_targets, fix_requirements
    from compat.resolve.plan import plan as make_plan

    request, _ = _configured(request)
    m = _matrix(request.matrix, request.settings)
    if request.targets:
        check_targets(request.targets, m)
    env = target_facts(_gather(request, m))
    findings = diagnose(env, m)
    targets = list(request.targets or default_targets(env, TRACKED))
    if not targets:
        raise UsageError("no tracked package is installed; name the targets (compat plan 'trl[vllm]')")
    fixes = fix_requirements(findings)
    try:
        result = resolve_from_installed(targets, fixes, env, m, latest=request.latest, minor_compat=request.minor_compat,
                                        bound=_bound(request.settings, progress))
    except ResolutionError as exc:
        return Conflict(targets=tuple(dict.fromkeys([*targets, *fixes])), error=exc)
    return make_plan(env, result, findings, installer=request.installer, python=_named_python(request, env))


def _named_python(request: FactsRequest, env: Facts) -> str | None:
    """The judged interpreter when --python named it (an interpreter or an environment directory):
    fix commands then run it (`ENV/bin/python -m pip`), not whichever `pip` is first on PATH."""
    python = env.python.executable if request.environment.python is not None else None
    return python if isinstance(python, str) else None


def matrix_show(request: ShowRequest) -> PackageReleases:
    """Every recorded release of a package (only the releases are read: show works while another part is broken)."""
    from packaging.version import InvalidVersion, Version

    from compat.matrix import shipped_matrix_dir
    from compat.matrix.releases import ReleaseIndex

    if request.since is not None:
        try:
            Version(request.since)
        except (InvalidVersion, ValueError) as exc:  # ValueError: a number too long for int() (Python 3.11+)
            raise UsageError(f"--since: {request.since!r} is not a version") from exc
    dirs = [shipped_matrix_dir() / "releases", *(Path(d) / "releases" for d in request.matrix)]
    index = ReleaseIndex(dirs, cache_dir=request.settings.cache_dir)
    found = index.get(request.package)
    if found is None:
        raise UsageError(f"no releases recorded for {request.package!r} (known: {', '.join(index.packages())})")
    return found


def matrix_validate(request: ValidateRequest) -> Validation:
    """Schemas, cross-references and sources of the whole matrix (shipped + directory, or directory alone)."""
    from compat.maintain.validate import validate_matrix

    if request.alone and request.directory is None:
        raise UsageError("--alone needs a DIRECTORY")
    if request.alone:
        return validate_matrix(base=request.directory, complete=False, audit_patterns=request.audit)
    return validate_matrix(tuple([request.directory] if request.directory else ()), audit_patterns=request.audit)


def matrix_site(request: SiteRequest) -> SiteResult:
    """Write the static HTML site of the matrix: the compatibility tables and a page per finding id."""
    from compat.atomic import write_atomic
    from compat.judge.checks import OWNED_IDS
    from compat.matrix import shipped_matrix_dir
    from compat.matrix.tables import build_rows, load_log_lines, stack_rows, wheel_rows
    from compat.report.site import SiteInput, render_site

    m = _matrix(request.matrix, request.settings)
    lines: dict[str, str] = {}
    for root in (shipped_matrix_dir(), *request.matrix):
        lines.update(load_log_lines(Path(root) / "log-lines.toml"))
    pages = render_site(SiteInput(
        stack=stack_rows(m), builds=build_rows(m), wheels=wheel_rows(m), signatures=m.signatures,
        checks=OWNED_IDS, log_lines=lines,
    ))
    size = 0
    try:
        for rel, text in sorted(pages.items()):
            path = request.out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            write_atomic(path, data)
            size += len(data)
        # a page of an id the catalog no longer has would keep answering links: compat's folder, so remove it
        for stale in sorted((request.out / "findings").glob("*.html")):
            if f"findings/{stale.name}" not in pages:
                stale.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write the site to {request.out}: {exc.strerror or exc}") from exc
    return SiteResult(out=request.out, pages=len(pages), size=size, signatures=len(m.signatures))


def matrix_api(request: ApiRequest) -> ApiLookup | ApiImports:
    """Where a name exists across the indexed releases, or what one release imports from another package."""
    from packaging.requirements import InvalidRequirement, Requirement

    from compat.model.unknown import Unknown
    from compat.timeline.index import load_api, lookup
    from compat.timeline.records import ApiImports

    try:
        req = Requirement(request.package)
    except InvalidRequirement as exc:
        raise UsageError(f"not a package or package==version: {request.package!r}") from exc
    pins = [s.version for s in req.specifier if s.operator in ("==", "===")]
    if len(req.specifier) != len(pins):
        raise UsageError(f"{request.package}: give a package or package==version")
    base = request.matrix[-1] if request.matrix else None
    api = load_api(req.name, base)
    if isinstance(api, Unknown):
        raise UsageError(f"{req.name}: {api.reason}")
    if request.imports is not None:
        if not pins:
            raise UsageError("--imports needs a release: PACKAGE==VERSION")
        return ApiImports(package=api.package, release=pins[0], other=request.imports, edges=api.imports(pins[0], request.imports))
    return lookup(api, request.name)


def matrix_refresh_api(request: ApiRefreshRequest) -> tuple[tuple[ApiOutcome, ...], str]:
    """Extend matrix/api with the releases it does not hold yet; (outcomes, the index named without credentials)."""
    from compat.maintain.index import IndexClient, redact
    from compat.sources.http import HttpClient
    from compat.timeline.index import api_dir
    from compat.timeline.refresh import refresh_api

    url = request.index_url or request.settings.index_url
    if not url:
        raise UsageError("no package index to read: pass --index-url URL or set PIP_INDEX_URL")
    client = IndexClient(url, http=HttpClient(timeout=request.timeout))
    outcomes = refresh_api(request.packages, out_dir=request.out or api_dir(), client=client, workers=request.workers, limit=request.limit)
    return outcomes, redact(url)


def matrix_refresh(request: RefreshRequest) -> Refreshed:
    """Regenerate matrix/releases/<package>.toml from the package index."""
    from compat.maintain.index import IndexClient, redact
    from compat.maintain.refresh import refresh
    from compat.matrix import shipped_matrix_dir
    from compat.sources.http import HttpClient

    url = request.index_url or request.settings.index_url
    if not url:
        raise UsageError("no package index to read: pass --index-url URL or set PIP_INDEX_URL")
    client = IndexClient(url, http=HttpClient(timeout=request.timeout))
    result = refresh(
        request.packages,
        out_dir=request.out or shipped_matrix_dir() / "releases",
        client=client,
        cache_dir=(request.cache_dir or request.settings.cache_dir) if request.use_cache else None,
        workers=request.workers,
    )
    return Refreshed(result=result, index=redact(url))


# ----------------------------------------------------------------------------- fleet


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


def fleet(request: FleetRequest) -> FleetReport:
    """Every node's facts (from a directory, srun or Ray), judged one by one and against each other."""
    from compat.judge.fleet import judge_fleet
    from compat.sources.fleet.directory import read_members

    modes = [m for m, on in (("DIR", request.directory is not None), ("--slurm", request.slurm), ("--ray", request.ray))
             if on]
    if len(modes) != 1:
        raise UsageError("name one source of facts: DIR, --slurm or --ray" if not modes else f"give one of {', '.join(modes)}")
    m = _matrix(request.matrix, request.settings)
    world = request.world_size
    baseline = read_members(request.baseline) if request.baseline is not None else None  # said before gathering
    if request.directory is not None:
        members = read_members(request.directory)
    elif request.slurm:
        from compat.sources.fleet.slurm import gather_slurm

        members, ntasks = gather_slurm(request.out, timeout=request.timeout)
        world = world or ntasks
    else:
        from compat.sources.fleet.ray_nodes import gather_ray

        members = gather_ray(request.ray or "", timeout=request.timeout)
        _save_members(members, request.out)
    config = read_config(request.config, find=request.find_config)
    fail_on = request.fail_on or (config.fail_on if config else None) or Severity.ERROR
    strict = request.strict or (config.strict if config else False)
    return judge_fleet(members, m, world_size=world, baseline=baseline, fail_on=fail_on, strict=strict)


def fleet_torch(request: FleetRequest) -> FleetReport | str | None:
    """Under a launcher (torchrun): gather every rank's facts; rank 0 gets the report, the others None,
    or a line saying why they could not take part (the store unreachable or gone; rank 0 reports them)."""
    import sys

    from compat.judge.fleet import judge_fleet
    from compat.sources.fleet.torch_dist import Departed, gather_torch
    from compat.sources.probe import ProbeRequest, probe

    m = _matrix(request.matrix, request.settings)
    baseline = _baseline_members(request.baseline)  # a wrong --baseline is said before anyone waits on the store
    # Every rank runs compat.fleet in the job's own interpreter: that one is judged, not a guess at another.
    python = Path(sys.executable)
    gathered = gather_torch(
        lambda: probe(ProbeRequest(
            python=python, timeout=min(request.timeout, 30.0), cache_dir=request.settings.cache_dir,
            torch_timeout=request.settings.torch_timeout,
        ), m),
        timeout=request.timeout, smoke=request.smoke, smoke_bytes=request.smoke_bytes, smoke_timeout=request.smoke_timeout,
    )
    if gathered is None:
        return None
    if isinstance(gathered, Departed):
        return f"rank {gathered.rank}: {gathered.reason} (rank 0 reports this rank as silent)"
    _save_members(gathered.members, request.out)
    return judge_fleet(gathered.members, m, world_size=gathered.world_size, smoke=gathered.smoke,
                       baseline=baseline, fail_on=request.fail_on or Severity.ERROR, strict=request.strict)


def _baseline_members(path: Path | None) -> list[FleetMember] | None:
    from compat.sources.fleet.directory import read_members

    return read_members(path) if path is not None else None


def _save_members(members: Iterable[FleetMember], out: Path | None) -> None:
    """One facts file per member (NODE.json, or NODE.rank-N.json where ranks differ), for a later --baseline."""
    from compat.atomic import write_output
    from compat.model.facts import dump_facts
    from compat.redact import redact_text

    if out is None:
        return
    for member in members:
        if member.facts is None or (member.local_rank or 0) != 0:
            continue  # a node's other ranks share its facts
        try:
            write_output(out / f"{member.node}.json", redact_text(dump_facts(member.facts)).encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot write {out / member.node}.json: {exc.strerror or exc}") from exc


# ----------------------------------------------------------------------------- smoke


@dataclass(frozen=True, kw_only=True)
class SmokeRequest(FactsRequest):
    """`compat smoke`: run the stack of the environment doctor would judge (or `environment.python`), stage by stage."""

    trainers: tuple[str, ...] = ()
    """TRL trainers the train stage runs two steps of (sft, dpo, grpo); empty: those the script uses, else sft."""
    budget: float = 900.0
    """Seconds the whole run may take, the probe included; a stage that cannot start within it is skipped."""
    processes: int = 2
    """Processes of the train stage's `accelerate launch` run (1: none)."""


def smoke(request: SmokeRequest, progress: Callable[[SmokeStageResult], None] | None = None) -> SmokeReport:
    """Each stage in a child of the judged interpreter, in a temp dir removed afterwards; a failing stage's output
    explained against the environment. `progress` is called with each stage's result as it ends."""
    import time

    from compat.model.smoke import SmokeReport, Status
    from compat.model.unknown import Unknown
    from compat.smoke.parse import failure_output, out_of_budget, skipped, stage_result
    from compat.smoke.plan import plan_stages
    from compat.sources.smoke.run import child_env, run_stage, scratch, this_environment

    started = time.monotonic()
    deadline = started + request.budget
    if request.environment.facts_file is not None:
        raise UsageError("compat smoke runs an interpreter: give --python, not --facts")
    m = _matrix(request.matrix, request.settings)
    env = _gather(request, m)
    python = env.python.executable
    if isinstance(python, Unknown):
        raise UsageError(f"no interpreter to run: {python.reason}")
    plans = plan_stages(env, trainers=request.trainers, processes=request.processes)
    results = []
    with scratch() as root:
        child = child_env(this_environment(), root)
        for plan in plans:
            if plan.skip is not None:
                result = skipped(plan)
            elif deadline - time.monotonic() < 1.0:
                result = out_of_budget(plan.stage, request.budget)
            else:
                children = run_stage(python, plan, root=root, env=child, deadline=deadline)
                result = stage_result(plan.stage, children)
                if result.status is Status.FAIL:
                    result = replace(result, diagnosis=_smoke_diagnosis(failure_output(children), env, m))
            results.append(result)
            if progress is not None:
                progress(result)
    trainers = next((tuple(a for a in p.args if not a.startswith("--")) for p in plans if p.stage.value == "train"), ())
    return SmokeReport(python=python, stages=tuple(results), budget_s=request.budget,
                       seconds=round(time.monotonic() - started, 3), trainers=trainers)


def _smoke_diagnosis(output: str, env: Facts, matrix: Matrix) -> SmokeDiagnosis | None:
    """explain's reading of a failing stage's output, against the smoked environment; None for no output."""
    from compat.explain.match import explain as run_explain
    from compat.report.smoke import diagnosis

    if not output.strip():
        return None
    return diagnosis(run_explain(output.splitlines(keepends=True), matrix, env, environment="the smoked environment"))


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


def lock_verify(request: VerifyRequest) -> SmokeVerification | Conflict:
    """The lock, and whether it installs and runs on this machine; the caller writes it only when it passed."""
    from compat.model.smoke import Verification
    from compat.report.lock import LockFormat, render_lock
    from compat.sources.smoke.install import InstallFailed, InstallRequest, install_lock
    from compat.sources.smoke.run import scratch

    locked = lock(request.lock)
    if isinstance(locked, Conflict):
        return locked
    settings = request.lock.settings
    with scratch() as root:
        installed = install_lock(InstallRequest(
            requirements=render_lock(locked, LockFormat.REQUIREMENTS), python_version=locked.python_version,
            index_url=request.lock.index_url or settings.index_url, find_links=request.find_links,
            offline=request.offline,
        ), root)
        if isinstance(installed, InstallFailed):
            return Verification(lock=locked, install_error=installed.reason, smoke=None, install_s=installed.seconds)
        report = smoke(SmokeRequest(environment=Environment(python=installed.python), trainers=request.trainers,
                                    budget=request.budget, processes=request.processes, matrix=request.lock.matrix,
                                    settings=settings))
    return Verification(lock=locked, install_error=None, smoke=report, install_s=installed.seconds)
