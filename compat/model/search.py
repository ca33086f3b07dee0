"""The bound on a resolver search, as the settings read it and a conflict's words name it.

Apart from the conflict records (`compat.model.conflict` re-exports it) so that reading the settings, which every
command does, does not create the lock and conflict records only `lock` and `plan` use.
"""

from __future__ import annotations

SEARCH_SECONDS_VARIABLE = "COMPAT_SEARCH_SECONDS"
"""The environment variable that sets a search's bound in seconds (read by compat.sources.settings)."""
