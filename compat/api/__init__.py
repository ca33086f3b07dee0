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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The names are imported when first used (PEP 562), so a command pays only for the modules it calls:
# `compat explain` on a pasted log must not import the resolver, the site renderer or the fleet code.
if TYPE_CHECKING:
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
    from compat.model.installer import Installer
    from compat.model.lock import FullLock, Lock, Plan
    from compat.sources.declared import Declared
    from compat.sources.settings import Settings, read_settings

_HOMES = {
    "ApiRefreshRequest": "compat.api.requests",
    "ApiRequest": "compat.api.requests",
    "Conflict": "compat.api.requests",
    "Declared": "compat.sources.declared",
    "DoctorRequest": "compat.api.requests",
    "DoctorResult": "compat.api.requests",
    "Environment": "compat.sources.environment",
    "ExplainRequest": "compat.api.facts_requests",
    "FactsRequest": "compat.api.facts_requests",
    "FleetRequest": "compat.api.requests",
    "FullLock": "compat.model.lock",
    "Installer": "compat.model.installer",
    "Lock": "compat.model.lock",
    "LockRequest": "compat.api.requests",
    "Plan": "compat.model.lock",
    "PlanRequest": "compat.api.requests",
    "RefreshRequest": "compat.api.requests",
    "Refreshed": "compat.model.curation",
    "Settings": "compat.sources.settings",
    "ShowRequest": "compat.api.requests",
    "SiteRequest": "compat.api.requests",
    "SiteResult": "compat.api.requests",
    "SmokeRequest": "compat.api.requests",
    "ValidateRequest": "compat.api.requests",
    "VerifyRequest": "compat.api.requests",
    "doctor": "compat.api.diagnosis",
    "explain": "compat.api.logs",
    "facts": "compat.api.environment",
    "fleet": "compat.api.nodes",
    "fleet_torch": "compat.api.nodes",
    "lock": "compat.api.locking",
    "lock_full": "compat.api.locking",
    "lock_verify": "compat.api.locking",
    "log_size": "compat.api.logs",
    "matrix_api": "compat.api.curation",
    "matrix_refresh": "compat.api.curation",
    "matrix_refresh_api": "compat.api.curation",
    "matrix_show": "compat.api.curation",
    "matrix_site": "compat.api.curation",
    "matrix_validate": "compat.api.curation",
    "plan": "compat.api.locking",
    "read_config": "compat.api.environment",
    "read_log": "compat.api.logs",
    "read_settings": "compat.sources.settings",
    "smoke": "compat.api.stack",
}
"""Where each public name lives: the module imported the first time the name is asked for."""


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



def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'compat.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # asked once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
