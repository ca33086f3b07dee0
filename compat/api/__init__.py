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

The package holds one module per concern, and this file re-exports their public names (import them
from `compat.api`; the module a function lives in is not part of the API): `requests.py` the frozen
request and result records, `environment.py` which environment is judged (config, matrix, facts),
`diagnosis.py` doctor, `locking.py` lock, plan and lock --verify, `logs.py` explain, `nodes.py`
fleet, `stack.py` smoke, `curation.py` the matrix commands.
"""

from compat.api.curation import (
    matrix_api,
    matrix_refresh,
    matrix_refresh_api,
    matrix_show,
    matrix_site,
    matrix_validate,
)
from compat.api.diagnosis import doctor
from compat.api.environment import facts, read_config
from compat.api.locking import lock, lock_full, lock_verify, plan
from compat.api.logs import explain, log_size, read_log
from compat.api.nodes import fleet, fleet_torch
from compat.api.requests import (
    ApiRefreshRequest,
    ApiRequest,
    Conflict,
    DoctorRequest,
    DoctorResult,
    Environment,
    ExplainRequest,
    FactsRequest,
    FleetRequest,
    LockRequest,
    PlanRequest,
    RefreshRequest,
    ShowRequest,
    SiteRequest,
    SiteResult,
    SmokeRequest,
    ValidateRequest,
    VerifyRequest,
)
from compat.api.stack import smoke
from compat.model.curation import Refreshed
from compat.model.lock import FullLock, Installer, Lock, Plan
from compat.sources.declared import Declared
from compat.sources.settings import Settings, read_settings

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
    "Lock",
    "LockRequest",
    "Plan",
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
    "log_size",
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

