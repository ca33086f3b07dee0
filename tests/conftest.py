from __future__ import annotations

import importlib.util
import os

import pytest

from tests.support import golden

# Fixtures that more than one folder uses (env, doctor, catalog, cli); a folder's own stay in its conftest.py.
pytest_plugins = ("tests.support.fixtures",)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files with what the tests render now (as COMPAT_UPDATE_GOLDEN=1)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-golden"):
        golden.request_update()
    _build_each_command_once()


def _build_each_command_once() -> None:
    """typer turns an application into a click command on every call and every CliRunner.invoke (reading each
    command function's signature and options): about 20 ms for compat's, 10 s of CPU over the suite's in-process
    runs. A process keeps the command built for each application and for each state of the one setting typer
    reads when it builds one (its test switch for shell detection); click parses every invocation afresh."""
    import weakref

    import typer.main
    import typer.testing

    build = typer.main.get_command
    built: weakref.WeakKeyDictionary[typer.Typer, dict[str | None, object]] = weakref.WeakKeyDictionary()

    def get_command(app: typer.Typer):
        per_app = built.setdefault(app, {})
        switch = os.environ.get("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION")
        if switch not in per_app:
            per_app[switch] = build(app)
        return per_app[switch]

    typer.main.get_command = get_command  # type: ignore[assignment]
    typer.testing._get_command = get_command  # type: ignore[attr-defined]


@pytest.hookimpl(trylast=True)  # after pytest-randomly has shuffled them
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked slow run first, in their random order, and the others after them in theirs: a run on
    pytest-xdist's workers ends on the short tests, not on one worker training a model for 40 s while the others
    have nothing left (docs/testing.md, "What the suite costs").

    Tests marked needs_torch skip where torch is not installed: CI runs the suite on Pythons for which the pinned
    torch has no wheel, and never installs another torch."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: the random order stays in each part
    if importlib.util.find_spec("torch") is not None:
        return
    skip = pytest.mark.skip(reason="needs torch (the README's test command installs torch==2.13.0)")
    for item in items:
        if item.get_closest_marker("needs_torch"):
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """compat's caches go to a directory of this test run, never the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("cache")
    mp.setenv("COMPAT_CACHE_DIR", str(root / "compat"))
    mp.setenv("XDG_CACHE_HOME", str(root))
    # explain reads a package the API index lacks from PIP_INDEX_URL: no test reaches a real index (the network
    # tests read it from COMPAT_TEST_INDEX_URL).
    if os.environ.get("PIP_INDEX_URL"):
        mp.setenv("COMPAT_TEST_INDEX_URL", os.environ["PIP_INDEX_URL"])
    mp.delenv("PIP_INDEX_URL", raising=False)
    # The width compat renders at is the terminal's or COLUMNS, else 100: the tests expect the last. Runners
    # differ (pytest-xdist's workers inherit COLUMNS=80), so no test sees the runner's.
    mp.delenv("COLUMNS", raising=False)
    mp.delenv("LINES", raising=False)
    yield
    mp.undo()
