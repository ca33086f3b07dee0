"""`compat doctor`: the findings of the judged environment, the config's ignores applied, against a threshold."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import TYPE_CHECKING

from compat.api.environment import configured, matrix_for, named_python
from compat.api.requests import DoctorRequest, DoctorResult
from compat.model.facts import Facts
from compat.model.findings import Severity
from compat.sources import gather

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.timeline.links import ApiSource


def doctor(request: DoctorRequest) -> DoctorResult:
    """What is wrong or at risk in the environment, and whether that fails the request's threshold."""
    from compat.judge.commands import for_interpreter
    from compat.judge.diagnose import diagnose, fails
    from compat.judge.ignores import apply_ignores, fails_waivers

    request, config = configured(request)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # Compiling the matrix on a cold cache costs about what the probe's children cost, and they mostly wait:
        # the probe runs meanwhile and waits for the matrix where it first needs it.
        loading = pool.submit(matrix_for, request.matrix, request.settings)
        env = gather(request.environment, request.declared, loading.result, settings=request.settings)
        m = loading.result()
    threshold = request.fail_on or (config.fail_on if config else None) or Severity.ERROR
    strict = request.strict or (config.strict if config else False)
    findings = for_interpreter(diagnose(env, m, api=_installed_api(request, env, m), feature_links=request.feature_links),
                               named_python(request, env))
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
    kept = request.settings.cache_dir / "installed-imports" if request.settings.cache_dir is not None else None
    return ApiSource(matrix.roots, dict(installed_releases(dirs, missing, cache_dir=kept)))
