from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """compat's caches go to a directory of this test run, never the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("cache")
    mp.setenv("COMPAT_CACHE_DIR", str(root / "compat"))
    mp.setenv("XDG_CACHE_HOME", str(root))
    yield
    mp.undo()
