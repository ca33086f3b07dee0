"""`compat explain`: a log read against the catalog, ranked for the environment when there is one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from compat.api.environment import configured, matrix_for, read_config
from compat.api.facts_requests import ExplainRequest
from compat.errors import CompatError
from compat.sources import gather

if TYPE_CHECKING:
    from compat.explain.match import ReadLog
    from compat.explain.records import Explanation
    from compat.matrix import Matrix
    from compat.model.facts import Facts
    from compat.timeline.links import ApiSource
    from compat.timeline.records import OnDemandIndex


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
    from compat.matrix.compiled import shipped_automata
    from compat.sources.cache import DirectoryStore

    d = request.declared
    if request.use_environment or request.environment.named() or any(v is not None for v in (d.gpus, d.driver, d.launcher)):
        request, _ = configured(request)
    elif request.config is not None:  # --no-env alone stays the log alone, whatever a config declares; one the user
        read_config(request.config, find=False)  # names is still checked (a broken one is an error, as everywhere)
    m = matrix_for(request.matrix, request.settings)
    cache = request.settings.cache_dir
    store = DirectoryStore(cache / "explain", shipped=shipped_automata(m.roots)) if cache is not None else None
    # The probe waits on its children (and reads compat's own interpreter): it runs while the log is read, which on
    # a pasted log halves the wait.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compat-probe") as pool:
        probed = pool.submit(_explain_environment, request, m)
        read = read_log(log, m, progress=progress, store=store)
        env, note = probed.result()
    source, indexed = _api_source(request, m, read, env)
    explanation = rank(read, m, env, environment=note, api=source)
    return replace(explanation, on_demand=indexed) if indexed else explanation


def _api_source(request: ExplainRequest, matrix: Matrix, read: ReadLog, env: Facts | None) -> tuple[ApiSource, tuple[OnDemandIndex, ...]]:
    """The API timeline explain answers from: the matrix's, over the on-demand index of the packages the
    log asks about and the matrix lacks (read from the package index within the budget, else the cache)."""
    from compat.explain.asked import asked
    from compat.timeline.links import ApiSource

    roots = tuple(matrix.roots)
    shipped = ApiSource(roots)
    wanted = asked(read.drafts, frozenset(shipped.indexed()), env)
    if not wanted:
        return shipped, ()
    from compat.timeline.ondemand import cache_root, index_on_demand

    cache = request.settings.cache_dir
    root = cache_root(cache) if cache is not None else None
    url = request.index_url or request.settings.index_url
    client = deadline = None
    if request.offline:
        local = "--offline: nothing read from the package index"
    elif not url:
        local = "no package index named to index it from (--index-url or PIP_INDEX_URL)"
    elif request.index_budget <= 0:
        local = "--index-budget 0: nothing read from the package index"
    else:
        import time

        from compat.maintain.index import IndexClient
        from compat.sources.http import HttpClient

        local = ""
        budget = request.index_budget
        deadline = time.monotonic() + budget
        client = IndexClient(url, http=HttpClient(timeout=min(10.0, budget), retries=1, backoff=0.2, deadline=deadline))
    done = index_on_demand(client, wanted, root, local=local, deadline=deadline)
    if root is None or not any(d.releases for d in done):
        return shipped, done
    return ApiSource((root, *roots)), done  # first: the shipped index and the overlays answer for what they hold


def _explain_environment(request: ExplainRequest, matrix: Matrix) -> tuple[Facts | None, str]:
    d = request.declared
    explicit = request.environment.named() or any(v is not None for v in (d.gpus, d.driver, d.launcher))
    if not request.use_environment and not explicit:
        return None, "environment not used (--no-env)"
    try:
        env = gather(request.environment, request.declared, matrix, settings=request.settings)
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
