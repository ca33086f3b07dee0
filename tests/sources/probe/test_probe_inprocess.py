"""compat's own interpreter is read in-process, with the same report the child would print.

The comparisons run in a fresh `python -c` process: there sys.path is as the interpreter built it, as in the
`compat` command (pytest's own process has its root put first, and takes the child path, which is tested too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat.sources.probe import interpreter
from compat.sources.probe.interpreter import child_script, fetch_interpreter, own_search_path
from compat.sources.probe.interpreter_report import collect

_BOTH = """
import dataclasses, json, os, sys
from pathlib import Path
from compat.sources.probe import interpreter as i

packages = sys.argv[1] == "packages"
me = Path(sys.executable)
search = i.own_search_path(me, os.environ)
inproc = i.fetch_interpreter(me, timeout=60, packages=packages)
child = i.fetch_interpreter_child(me, timeout=60, environ=os.environ, packages=packages)
print(json.dumps({
    "shortcut": search is not None,
    "equal": inproc == child,
    "inproc": repr(inproc),
    "child": repr(child),
    "count": len(inproc.distributions),
}))
"""


def _python_c(code: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=cwd, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")}


@pytest.mark.parametrize("packages", ["packages", "interpreter-only"])
def test_in_process_report_equals_the_childs(tmp_path, packages):
    seen = _python_c(_BOTH, packages, env=_clean_env(), cwd=tmp_path)
    assert seen["shortcut"], "compat's own interpreter, started plainly, should be read in-process"
    assert seen["equal"], f"in-process {seen['inproc']}\nchild {seen['child']}"
    if packages == "packages":
        assert seen["count"] > 10  # compat's own dependencies at least: the scan really ran
    else:
        assert seen["count"] == 0


_DOCTOR = """
import sys
from compat.sources.probe import interpreter

if sys.argv.pop(1) == "child":
    interpreter.own_search_path = lambda *a: None  # the child path, as for any other interpreter
sys.argv[0] = "compat"
from compat.cli import main
main()
"""


def test_doctor_requirements_json_is_the_same_with_and_without_the_shortcut(tmp_path):
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("torch==2.5.1\ntransformers==4.51.3\ntrl==0.15.2\n", encoding="utf-8")
    env = {**_clean_env(), "COMPAT_CACHE_DIR": str(tmp_path / "cache")}
    out = {}
    for way in ("in-process", "child"):
        done = subprocess.run([sys.executable, "-c", _DOCTOR, way, "doctor", "-r", str(reqs), "--json",
                               "--python", sys.executable],
                              capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False)
        assert done.returncode in (0, 1), done.stderr
        out[way] = done.stdout
    assert json.loads(out["in-process"])["facts"]["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert out["in-process"] == out["child"]


def test_another_interpreter_or_environment_is_never_read_in_process(tmp_path):
    other = tmp_path / "python"
    other.symlink_to(sys.executable)  # the same binary under another name is not the same sys.executable
    assert own_search_path(other, os.environ) is None
    assert own_search_path(Path(sys.executable), {**os.environ, "PYTHONPATH": str(tmp_path)}) is None
    nouser = {k: v for k, v in os.environ.items() if k != "PYTHONNOUSERSITE"}
    if not sys.flags.no_user_site:
        assert own_search_path(Path(sys.executable), {**nouser, "PYTHONNOUSERSITE": "1"}) is None


def test_a_caller_environment_runs_the_child(monkeypatch):
    ran = []
    real = interpreter.fetch_interpreter_child

    def child(*args, **kwargs):
        ran.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(interpreter, "fetch_interpreter_child", child)
    found = fetch_interpreter(Path(sys.executable), timeout=60, environ=dict(os.environ), packages=False)
    assert ran and found.python.version == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.parametrize(("entry", "argv", "expected"), [
    ("", ["-c"], True),
    ("/somewhere/bin", ["/somewhere/bin/compat"], True),
    ("/repo/root", ["/somewhere/bin/pytest"], False),
])
def test_only_the_entry_python_put_first_is_dropped(entry, argv, expected):
    assert interpreter._python_put_first(entry, argv) is expected


def test_the_childs_script_is_the_report_module_run_after_safe_path():
    script = child_script()
    assert script.startswith(interpreter.SAFE_PATH)
    assert script.rstrip().endswith("main(sys.argv[1:])")
    compile(script, "<child>", "exec")  # the child's text is valid Python as a whole


def test_collect_reads_the_given_search_path_only(tmp_path):
    site = tmp_path / "site"
    (site / "only_here-1.0.dist-info").mkdir(parents=True)
    (site / "only_here-1.0.dist-info" / "METADATA").write_text("Name: only_here\nVersion: 1.0\n", encoding="utf-8")
    report = collect([], [str(site)])
    assert [d["name"] for d in report["distributions"]] == ["only-here"]
    assert report["torch_stamp"] is None  # no torch on that path, whatever this process has
