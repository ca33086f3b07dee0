"""`compat lock` and `compat plan`: targets resolved into a pinned set (closed by uv with `full`, installed
and smoked with `lock_verify`), and the steps from the installed environment to one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from compat.api.environment import configured, matrix_for, named_python
from compat.api.requests import Conflict, Environment, LockRequest, PlanRequest, SmokeRequest, VerifyRequest
from compat.api.stack import smoke
from compat.errors import ResolutionError, UsageError
from compat.model.lock import FullLock, Lock, Plan
from compat.sources import gather
from compat.sources.settings import Settings

if TYPE_CHECKING:
    from compat.model.smoke import Verification as SmokeVerification
    from compat.resolve import SearchBound


def lock(request: LockRequest, progress: Callable[[int, float], None] | None = None) -> Lock | Conflict:
    """A pinned set for the targets on the environment's (or the declared) hardware; `progress` is called now and
    then with the search's rounds and seconds."""
    from compat.resolve import check_targets, declared_target, lock_hardware, read_targets, resolve, target_facts

    request, _ = configured(request)
    m = matrix_for(request.matrix, request.settings)
    targets = read_targets(request.targets)  # read once: checked here, searched and recorded by resolve
    check_targets(targets, m)
    d = request.declared
    fully_declared = d.gpus is not None and (d.driver is not None or d.no_gpus()) and request.python_version is not None
    if fully_declared and not (request.prefer_installed or request.environment.named()):
        # Nothing on this host matters: skip the probe (it imports torch in a child process).
        target = declared_target(python_version=request.python_version or "", platform=request.platform)
        env = gather(request.environment, d, m, settings=request.settings, base=target)
    else:
        # The probed interpreter gives the Python version and platform (and, with prefer_installed, the packages);
        # its torch is replaced by the one resolved, so it is not imported.
        env = target_facts(gather(request.environment, d, m, settings=request.settings, import_torch=False),
                           python_version=request.python_version, platform=request.platform)
    hardware = lock_hardware(env, m)
    try:
        return resolve(targets, env, m, prefer_installed=request.prefer_installed, minor_compat=request.minor_compat,
                       exclude_newer=_date(request.exclude_newer), bound=_bound(request.settings, progress), hardware=hardware)
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
    from compat.resolve import check_targets, read_targets, resolve_from_installed, target_facts
    from compat.resolve.plan import default_targets, fix_requirements
    from compat.resolve.plan import plan as make_plan

    request, _ = configured(request)
    m = matrix_for(request.matrix, request.settings)
    asked = read_targets(request.targets) if request.targets else None  # read once: checked, then searched
    if asked is not None:
        check_targets(asked, m)
    env = target_facts(gather(request.environment, request.declared, m, settings=request.settings))
    findings = diagnose(env, m)
    if asked is None:
        installed = default_targets(env, TRACKED)
        if not installed:
            raise UsageError("no tracked package is installed; name the targets (compat plan 'trl[vllm]')")
        asked = read_targets(installed)
    targets = list(asked.asked)
    fixes = fix_requirements(findings)
    try:
        result = resolve_from_installed(asked, fixes, env, m, latest=request.latest, minor_compat=request.minor_compat,
                                        bound=_bound(request.settings, progress))
    except ResolutionError as exc:
        return Conflict(targets=tuple(dict.fromkeys([*targets, *fixes])), error=exc)
    return make_plan(env, result, findings, installer=request.installer, python=named_python(request, env))


def lock_verify(request: VerifyRequest) -> SmokeVerification | Conflict:
    """The lock, and whether it installs and runs on this machine; the caller writes it only when it passed."""
    from compat.model.smoke import Verification
    from compat.report.lock import LockFormat, render_lock
    from compat.sources.smoke.install import InstallFailed, InstallRequest, check_find_links, install_lock
    from compat.sources.smoke.run import scratch

    check_find_links(request.find_links)  # before the search: a mistyped folder is a usage error, not a verdict
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
        # The venv is this run's own: its first child compiles what it imports and the later ones (ranks, launches)
        # read that instead of compiling the stack again each (tests/api/test_lock_verify.py's smoke: docs/lock.md).
        report = smoke(SmokeRequest(environment=Environment(python=installed.python), trainers=request.trainers,
                                    budget=request.budget, processes=request.processes, matrix=request.lock.matrix,
                                    settings=settings, bytecode=True))
    return Verification(lock=locked, install_error=None, smoke=report, install_s=installed.seconds)
