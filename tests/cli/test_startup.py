"""`compat explain` on a pasted log imports only what it uses (issue 25): the modules a fresh process holds at its
end are checked, never timed (the timing is bench/startup.py's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.startup import FORBIDDEN, LOG

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import json, sys
sys.argv = ["compat", *sys.argv[1:]]
from compat.cli import main
try:
    main()
except SystemExit as done:
    code = done.code
sys.stdout = sys.__stdout__
print("MODULES:" + json.dumps(sorted(sys.modules)) + " CODE:" + json.dumps(code))
"""


def _modules(tmp_path: Path, *args: str) -> tuple[list[str], object]:
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, cwd=tmp_path,
                          env=_env(tmp_path), timeout=120, check=False)
    tail = done.stdout.rsplit("MODULES:", 1)
    assert len(tail) == 2, done.stdout + done.stderr
    modules, code = tail[1].split(" CODE:")
    return json.loads(modules), json.loads(code)


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    env["PYTHONPATH"] = str(ROOT)
    env["COMPAT_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def _forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_explain_on_a_pasted_log_imports_nothing_it_does_not_use(tmp_path):
    log = tmp_path / "small.log"
    log.write_text(LOG)
    _modules(tmp_path, "explain", "--no-env", str(log))  # the first run compiles the matrix into the cache
    for args in (("explain", "--no-env", str(log)), ("explain", str(log))):
        modules, code = _modules(tmp_path, *args)
        assert code == 0, args  # the log's cuDNN error is a known failure
        assert "compat.explain.match" in modules  # the check itself ran
        assert _forbidden(modules) == [], args


def test_the_check_would_see_a_forbidden_import():
    assert _forbidden(["pydantic.main", "compat.resolve.provider", "compat.explain", "pydantic_settings"]) == [
        "pydantic.main", "compat.resolve.provider"]


def test_doctor_on_a_requirements_file_coerces_its_options_without_pydantic(tmp_path):
    # typer's pydantic adapters are for the values compat.cli._coercion leaves to typer; a path and a format are not
    from bench.startup import requirements

    reqs = tmp_path / "requirements.txt"
    reqs.write_text(requirements())
    modules, code = _modules(tmp_path, "doctor", "-r", str(reqs), "--format", "json")
    assert code in (0, 1)  # a verdict, not a usage error or a bug
    assert "compat.judge.diagnose" in modules
    assert not [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")]
    _, code = _modules(tmp_path, "doctor", "-r", str(tmp_path / "absent.txt"))
    assert code == 2  # typer's own answer to a path that does not exist still comes


_RUN = """
import atexit, sys, threading
sys.argv = ["compat", *sys.argv[1:]]
atexit.register(lambda: print("EXIT HANDLER RAN", file=sys.stderr))
if sys.argv[1:2] == ["--thread"]:
    sys.argv.pop(1)
    threading.Thread(target=lambda: (__import__("time").sleep(0.3), print("THREAD DONE", flush=True))).start()
atexit.register(lambda: print("MODULES:" + " ".join(m for m in sys.modules if m.startswith("compat.cli."))))
from compat.entry import main
main()
"""


def test_the_entry_point_leaves_without_teardown_yet_runs_exit_handlers_and_keeps_codes(tmp_path):
    def child(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _RUN, *args], capture_output=True, text=True, cwd=tmp_path,
                              env=_env(tmp_path), timeout=120, check=False)

    done = child("--version")
    assert (done.returncode, done.stdout.split("MODULES:")[0].strip()) == (0, f"compat {__import__('compat').__version__}")
    assert "EXIT HANDLER RAN" in done.stderr  # coverage, temporary directories and pools still finish
    done = child("explain", "--no-such-option")
    assert done.returncode == 2 and "EXIT HANDLER RAN" in done.stderr
    done = child("--thread", "--version")
    assert done.returncode == 0 and "THREAD DONE" in done.stdout  # a running thread gets the ordinary exit


def test_a_process_registers_only_the_command_it_runs(tmp_path):
    log = tmp_path / "small.log"
    log.write_text(LOG)
    # "--": arguments typer reads (plain ones are read without typer: tests/cli/test_fast_explain.py)
    done = subprocess.run([sys.executable, "-c", _RUN, "explain", "--no-env", "--", str(log)], capture_output=True,
                          text=True, cwd=tmp_path, env=_env(tmp_path), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    modules = done.stdout.rsplit("MODULES:", 1)[1].split()
    assert "compat.cli.explain" in modules and not {"compat.cli.lock", "compat.cli.smoke", "compat.cli.fleet"} & {*modules}
    done = subprocess.run([sys.executable, "-c", _RUN, "--debug", "--help"], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(tmp_path), timeout=120, check=False)
    assert done.returncode == 0 and "compat.cli.lock" in done.stdout.rsplit("MODULES:", 1)[1].split()  # an option first: all


def test_the_command_map_names_the_module_of_every_command():
    from compat.cli import app
    from compat.cli.commands import MODULES, ORDER

    found = {(c.name or c.callback.__name__).replace("_", "-"): c.callback.__module__ for c in app.registered_commands}
    found.update((g.name, g.typer_instance.registered_commands[0].callback.__module__) for g in app.registered_groups)
    assert {name: f"compat.cli.{module}" for name, module in MODULES.items()} == found
    assert set(ORDER) == set(MODULES.values())


def test_a_profiled_process_ends_the_ordinary_way_so_the_profile_is_written(tmp_path):
    out = tmp_path / "compat.prof"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "compat", "--version"],
                          capture_output=True, text=True, cwd=tmp_path, env=_env(tmp_path), timeout=120, check=False)
    assert done.returncode == 0 and out.stat().st_size > 0, done.stderr


def test_explain_starts_with_the_collector_off_and_reads_the_log_with_it_on(monkeypatch) -> None:
    """compat.entry turns the garbage collector off for `compat explain` only; compat.cli._explain freezes what
    start-up made and turns it back on before the log's first block (never when the collector was on already)."""
    import gc

    import compat.cli
    import compat.entry
    from compat.cli._explain import _collected

    seen: list[bool] = []
    monkeypatch.setattr(compat.entry, "ONLY", None)
    monkeypatch.setattr(compat.cli, "run", lambda: seen.append(gc.isenabled()))
    try:
        for argv in (["compat", "explain", "x.log"], ["compat", "doctor"], ["compat", "--version"]):
            monkeypatch.setattr(sys, "argv", argv)
            compat.entry.main()
            gc.enable()
    finally:
        gc.enable()
    assert seen == [False, True, True]

    frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    gc.disable()
    try:
        blocks = _collected(iter([b"a\n", b"b\n"]))
        assert not gc.isenabled()  # nothing read yet: still start-up
        assert next(blocks) == b"a\n"
        assert gc.isenabled() and frozen == [True]
        assert list(blocks) == [b"b\n"] and frozen == [True]
    finally:
        gc.enable()
    assert list(_collected([b"c\n"])) == [b"c\n"] and frozen == [True]  # on already: nothing frozen
