"""explain indexes a package the shipped API index lacks on demand, from a real HTTP index on 127.0.0.1
serving wheels built here, into the cache: reused by the next run, never read with --offline, bounded in
time, and an unreadable wheel is a reason, not a traceback."""

from __future__ import annotations

import json
import threading

import jsonschema
import pytest
from packaging.version import Version
from typer.testing import CliRunner

from compat import api
from compat.cli import app
from compat.explain.asked import asked
from compat.explain.match import read_log
from compat.maintain.index import IndexClient
from compat.report.explain import render_json, render_text
from compat.report.schemas import schemas
from compat.sources.http import HttpClient
from compat.sources.settings import Settings
from compat.timeline.ondemand import choose_releases
from compat.timeline.records import ApiKind, Drift, OnDemandOutcome
from compat.timeline.refresh import refresh_package
from tests.support.facts import facts
from tests.support.matrix import shipped_matrix
from tests.support.wheels import wheel

LOG = """\
Traceback (most recent call last):
  File "/home/user/train.py", line 3, in <module>
    from pkgz import old_helper
ImportError: cannot import name 'old_helper' from 'pkgz' (/venv/lib/python3.11/site-packages/pkgz/__init__.py)
"""


def _pkgz(index, version: str, *, helper: bool) -> None:
    init = b"def new_helper():\n    pass\n" + (b"def old_helper():\n    pass\n" if helper else b"")
    index.files[f"pkgz-{version}-py3-none-any.whl"] = wheel("pkgz", version, modules={"pkgz/__init__.py": init})


@pytest.fixture
def pkgz(api_index):
    """pkgz 1.0.0 - 1.3.0; 1.2.0 dropped old_helper."""
    for v in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        _pkgz(api_index, v, helper=Version(v) < Version("1.2.0"))
    return api_index


def _explain(index, cache, **fields):
    settings = Settings(cache_dir=cache, index_url=index.url)
    request = api.ExplainRequest(use_environment=False, settings=settings, **fields)
    return api.explain(request, [LOG.encode()])


def test_indexes_the_package_on_demand_then_answers_from_the_cache(pkgz, tmp_path):
    result = _explain(pkgz, tmp_path)
    (done,) = result.on_demand
    assert (done.package, done.outcome, done.added) == ("pkgz", OnDemandOutcome.INDEXED, 4)
    assert done.releases == ("1.0.0", "1.1.0", "1.2.0", "1.3.0") and done.requests > 0 and done.reason is None
    (error,) = result.errors
    assert error.api is not None
    assert (error.api.drift, error.api.removed_in, error.api.fix) == (Drift.CALLEE_TOO_NEW, "1.2.0", ("pkgz<1.2.0",))
    assert result.known
    text = render_text(result)
    assert "api: pkgz dropped `pkgz:old_helper` (removed in 1.2.0; present in 1.0.0 - 1.1.0)" in text
    assert "indexed pkgz on demand: 4 release(s) read in " in text
    assert "its index holds 4 release(s) (1.0.0 - 1.3.0)" in text
    doc = json.loads(render_json(result))
    assert doc["api_index"][0] | {"seconds": 0} == {
        "package": "pkgz", "outcome": "indexed", "releases": ["1.0.0", "1.1.0", "1.2.0", "1.3.0"], "added": 4,
        "requests": done.requests, "seconds": 0, "reason": None,
    }
    jsonschema.validate(doc, schemas()["explain"])

    pkgz.log.clear()
    again = _explain(pkgz, tmp_path)
    assert pkgz.log == []  # the cache holds what the log asks: no request reached the index
    (cached,) = again.on_demand
    assert (cached.outcome, cached.added, cached.requests) == (OnDemandOutcome.CACHED, 0, 0)
    assert again.errors[0].api == error.api
    assert "pkgz: answered from the cache of an earlier run, 4 release(s) (1.0.0 - 1.3.0); nothing read from the package index\n" \
        in render_text(again)

    offline = _explain(pkgz, tmp_path, offline=True)
    assert pkgz.log == []
    assert offline.on_demand[0].outcome is OnDemandOutcome.CACHED
    assert offline.on_demand[0].reason == "--offline: nothing read from the package index"
    assert offline.errors[0].api == error.api
    assert "(1.0.0 - 1.3.0) (--offline: nothing read from the package index)\n" in render_text(offline)


def test_offline_with_an_empty_cache_is_unknown_and_sends_nothing(pkgz, tmp_path):
    result = _explain(pkgz, tmp_path, offline=True)
    assert pkgz.log == []
    (done,) = result.on_demand
    assert (done.outcome, done.releases, done.requests) == (OnDemandOutcome.UNKNOWN, (), 0)
    assert done.reason == "--offline: nothing read from the package index, and no earlier run indexed it"
    assert result.errors[0].api is None
    assert "pkgz: not indexed (--offline: nothing read from the package index, and no earlier run indexed it)" in render_text(result)


def test_without_an_index_or_a_cache_it_says_why(pkgz, tmp_path):
    request = api.ExplainRequest(use_environment=False, settings=Settings(cache_dir=tmp_path))
    (done,) = api.explain(request, [LOG.encode()]).on_demand
    assert done.reason == "no package index named to index it from (--index-url or PIP_INDEX_URL), and no earlier run indexed it"
    request = api.ExplainRequest(use_environment=False, settings=Settings(cache_dir=None, index_url=pkgz.url))
    (done,) = api.explain(request, [LOG.encode()]).on_demand
    assert done.reason == "no cache directory to index it into (COMPAT_NO_CACHE)"
    assert pkgz.log == []


def test_a_spent_budget_leaves_the_releases_pending_for_the_next_run(pkgz, tmp_path):
    pkgz.stall = threading.Event()  # every wheel read hangs
    try:
        result = _explain(pkgz, tmp_path, index_budget=0.5)
    finally:
        pkgz.stall.set()
    (done,) = result.on_demand
    assert (done.outcome, done.added, done.releases) == (OnDemandOutcome.UNKNOWN, 0, ())
    assert done.reason is not None and done.reason.startswith("4 release(s) not read yet (1.0.0, 1.1.0, 1.2.0, ...)")
    assert done.reason.endswith("not read, the time allowed ran out")
    assert result.errors[0].api is None
    pkgz.stall = None
    (later,) = _explain(pkgz, tmp_path).on_demand  # pending: read by the next run
    assert (later.outcome, later.added) == (OnDemandOutcome.INDEXED, 4)


def test_a_refresh_told_to_stop_starts_no_further_release(pkgz, tmp_path):
    client = IndexClient(pkgz.url, http=HttpClient(timeout=5.0, backoff=0.01))
    outcome = refresh_package(client, "pkgz", tmp_path / "pkgz", stop=lambda: True)
    assert outcome.added == 0
    missing = json.loads((tmp_path / "pkgz" / "releases.json").read_text())["missing"]
    assert missing == dict.fromkeys(("1.0.0", "1.1.0", "1.2.0", "1.3.0"), "pending: not read, the time allowed ran out")


def test_a_zero_budget_reads_nothing(pkgz, tmp_path):
    (done,) = _explain(pkgz, tmp_path, index_budget=0).on_demand
    assert done.outcome is OnDemandOutcome.UNKNOWN and pkgz.log == []
    assert done.reason is not None and done.reason.startswith("--index-budget 0")


def test_an_unreadable_wheel_is_a_reason_not_a_traceback(pkgz, tmp_path):
    pkgz.files["pkgz-1.3.0-py3-none-any.whl"] = b"not a wheel\n" * 100
    result = _explain(pkgz, tmp_path)
    (done,) = result.on_demand
    assert (done.outcome, done.added, done.releases) == (OnDemandOutcome.INDEXED, 3, ("1.0.0", "1.1.0", "1.2.0"))
    assert done.reason is not None and done.reason.startswith("1 release(s) unreadable (1.3.0: pkgz-1.3.0-py3-none-any.whl: not a zip file")
    assert result.errors[0].api is not None and result.errors[0].api.removed_in == "1.2.0"
    pkgz.log.clear()
    assert _explain(pkgz, tmp_path).on_demand[0].outcome is OnDemandOutcome.CACHED  # settled: not tried again
    assert pkgz.log == []


def test_a_broken_cache_is_a_reason_with_what_to_remove(pkgz, tmp_path):
    broken = tmp_path / "api-index" / "api" / "pkgz"
    broken.mkdir(parents=True)
    (broken / "releases.json").write_text("{not json")
    (done,) = _explain(pkgz, tmp_path).on_demand
    assert done.outcome is OnDemandOutcome.UNKNOWN and pkgz.log == []
    assert done.reason is not None and done.reason.startswith("the cached index is broken (")
    assert done.reason.endswith(f"remove {broken} to index it again")
    (done,) = _explain(pkgz, tmp_path, offline=True).on_demand
    assert done.reason is not None and done.reason.startswith("--offline: nothing read from the package index, and the cached index is unreadable")


def test_a_package_the_index_does_not_serve(api_index, tmp_path):
    (done,) = _explain(api_index, tmp_path).on_demand
    assert done.outcome is OnDemandOutcome.UNKNOWN
    assert done.reason is not None and done.reason.endswith("/simple/pkgz/: HTTP 404")


def test_where_a_name_went_is_narrowed_between_the_releases_read(api_index, tmp_path):
    versions = [f"1.{i}.0" for i in range(30)]
    for v in versions:
        _pkgz(api_index, v, helper=Version(v) < Version("1.7.0"))
    result = _explain(api_index, tmp_path)
    (done,) = result.on_demand
    assert len(done.releases) < 30  # not every release: the newest, a spread, then halvings
    assert {"1.6.0", "1.7.0"} <= set(done.releases)
    assert result.errors[0].api is not None
    assert (result.errors[0].api.removed_in, result.errors[0].api.fix) == ("1.7.0", ("pkgz<1.7.0",))


def test_a_change_between_unreadable_releases_is_said_not_narrowed(api_index, tmp_path):
    for v in [f"1.{i}.0" for i in range(30)]:
        _pkgz(api_index, v, helper=Version(v) < Version("1.7.0"))
    for v in ("1.7.0", "1.8.0"):
        api_index.files[f"pkgz-{v}-py3-none-any.whl"] = b"not a wheel\n" * 100
    result = _explain(api_index, tmp_path)
    (done,) = result.on_demand
    assert done.reason is not None
    assert "where pkgz:old_helper changed lies between 1.6.0 and 1.9.0, and the 2 release(s) between are not read" in done.reason
    assert result.errors[0].api is not None and result.errors[0].api.removed_in == "1.9.0"


def test_choose_releases_takes_the_newest_a_spread_and_the_named_ones_with_their_neighbours():
    listed = [Version(f"2.{i}") for i in range(40)]
    chosen = choose_releases(listed, ["2.3", "2.21.5", "not-a-version"], newest=5)
    assert set(listed[-5:]) <= chosen
    assert {Version("2.0"), Version("2.8"), Version("2.16")} <= chosen  # every 8th
    assert {Version("2.2"), Version("2.3"), Version("2.4")} <= chosen  # listed: it and its neighbours
    assert {Version("2.21"), Version("2.22")} <= chosen  # not listed: the two around it
    assert choose_releases(listed[:3], [], newest=5) == set(listed[:3])


def _drafts(text: str):
    return read_log([text.encode()], shipped_matrix()).drafts


def test_asked_names_packages_not_the_standard_library_or_the_users_code():
    log = "\n\n".join([
        "ImportError: cannot import name 'x' from 'pkgz' (/venv/lib/python3.11/site-packages/pkgz/__init__.py)",
        "ImportError: cannot import name 'y' from 'collections' (/usr/lib/python3.11/collections/__init__.py)",
        "ImportError: cannot import name 'z' from 'mytools' (/home/user/proj/mytools/__init__.py)",
        "AttributeError: module 'trl' has no attribute 'core'",
        "AttributeError: module 'other_pkg.sub' has no attribute 'thing'",
    ])
    wanted = asked(_drafts(log), frozenset({"trl"}))
    assert [(w.package, w.keys) for w in wanted] == [
        ("pkgz", ((ApiKind.NAME, "pkgz:x"),)),
        ("other-pkg", ((ApiKind.NAME, "other_pkg.sub:thing"),)),
    ]


def test_asked_names_the_package_of_the_frame_an_argument_error_raised_in_with_its_installed_release():
    log = "\n".join([
        "Traceback (most recent call last):",
        '  File "/home/user/train.py", line 3, in <module>',
        "    run()",
        '  File "/venv/lib/python3.11/site-packages/pkgq/runner.py", line 10, in run',
        "    Engine(fast=True)",
        "TypeError: Engine.__init__() got an unexpected keyword argument 'fast'",
    ])
    wanted = asked(_drafts(log), frozenset(), facts(packages={"pkgq": "2.1.0+local"}))
    assert [(w.package, w.versions, w.keys) for w in wanted] == [("pkgq", ("2.1.0",), ())]


def test_cli_options(pkgz, tmp_path, monkeypatch):
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path))
    log = tmp_path / "run.log"
    log.write_text(LOG)
    out = CliRunner().invoke(app, ["explain", str(log), "--no-env", "--index-url", pkgz.url, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["api_index"][0]["outcome"] == "indexed"
    pkgz.log.clear()
    out = CliRunner().invoke(app, ["explain", str(log), "--no-env", "--index-url", pkgz.url, "--offline"])
    assert out.exit_code == 0 and pkgz.log == []
    assert "pkgz: answered from the cache of an earlier run" in out.stdout
