"""`compat explain`: a log read against the catalog, ranked for the environment when there is one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from compat.api.environment import configured, matrix_for
from compat.api.requests import ExplainRequest
from compat.errors import CompatError
from compat.model.facts import Facts
from compat.sources import gather

if TYPE_CHECKING:
    from compat.explain.records import Explanation
    from compat.matrix import Matrix


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
        request, _ = configured(request)  # --no-env alone stays the log alone, whatever the config declares
    m = matrix_for(request.matrix, request.settings)
    cache = request.settings.cache_dir
    store = DirectoryStore(cache / "explain") if cache is not None else None
    # The probe waits on its children (and reads compat's own interpreter): it runs while the log is read, which on
    # a pasted log halves the wait.
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
