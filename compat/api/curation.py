"""The `compat matrix` commands: show, validate, site, api, refresh and refresh-api."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from compat.api.environment import matrix_for
from compat.api.requests import (
    ApiRefreshRequest,
    ApiRequest,
    RefreshRequest,
    ShowRequest,
    SiteRequest,
    SiteResult,
    ValidateRequest,
)
from compat.errors import UsageError
from compat.model.curation import Refreshed, Validation

if TYPE_CHECKING:
    from compat.matrix.releases import PackageReleases
    from compat.timeline.records import ApiImports, ApiLookup, ApiOutcome


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

    m = matrix_for(request.matrix, request.settings)
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
    if request.name is not None and not request.name.strip():
        raise UsageError("NAME is empty: give a name, a Class.member or a Class.method(parameter), e.g. 'Trainer.compute_loss'")
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
    outcomes = refresh_api(request.packages, out_dir=request.out or api_dir(), client=client, workers=request.workers, limit=request.limit,
                           backfill=request.backfill)
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
