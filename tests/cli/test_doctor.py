"""`compat doctor` end to end: fake environments, declared hardware, exit codes."""

from __future__ import annotations

from tests.support.fixtures import ids


def _pip(report) -> str:
    """How doctor's run lines start for the environment --python named: its interpreter, never a bare pip."""
    return f"{report['facts']['python']['executable']} -m pip"


def _texts(finding: dict) -> list[str]:
    """The text of each evidence record in a finding of doctor's JSON."""
    return [e["text"] for e in finding["evidence"]]


def _finding(report, fid):
    return next(f for f in report["findings"] if f["id"] == fid and f["status"] == "found")


def test_old_driver_under_cuda_12_torch_is_an_error_naming_the_driver(env, doctor):
    python = env(torch="2.5.1+cu124")
    code, report = doctor("--python", python, "--gpus", "2xA100", "--driver", "470.82.01")
    assert code == 1
    f = _finding(report, "cuda-driver-too-old")
    assert f["severity"] == "error"
    assert "Upgrade the host driver" in f["fix"]["advice"]
    assert any("driver 470.82.01 (declared) supports CUDA <= 11.4" in e for e in _texts(f))
    # no torch 2.5.1 build runs on R470 (only cu118 through minor-version compatibility): nothing to install
    assert any("oldest driver one runs on is 520.61.05" in e for e in _texts(f))
    assert f["fix"]["commands"] == []
    assert report["facts"]["declared"] == ["driver", "gpus"]


def test_a_current_driver_clears_it(env, doctor):
    python = env(torch="2.5.1+cu124")
    _, report = doctor("--python", python, "--gpus", "2xA100", "--driver", "550.54.15")
    assert "cuda-driver-too-old" not in ids(report)
    assert "torch-cuda-minor-compat" not in ids(report)


def test_rtx5090_with_torch_251_lacks_sm_120(env, doctor):
    python = env(torch="2.5.1+cu124")
    code, report = doctor("--python", python, "--gpus", "1xRTX5090", "--driver", "570.86.10")
    assert code == 1
    f = _finding(report, "gpu-arch-not-in-torch-build")
    assert any("sm_120" in e for e in _texts(f))
    assert f["fix"]["requires"] == ["torch>=2.7.0"]


def test_vllm_072_next_to_torch_260_is_a_broken_pin(env, doctor):
    python = env(torch="2.6.0", vllm="0.7.2")
    code, report = doctor("--python", python, "--gpus", "1xH100", "--driver", "550.54.15")
    assert code == 1
    first = report["findings"][0]
    assert first["id"] == "torch-pin-broken-extension" and first["consequence"] == "broken-build"
    # vLLM first: it pulls the others (whose own pins are the same problem, so one finding for all)
    assert first["title"] == ("Compiled against torch 2.5.1, but torch 2.6.0 is installed: "
                              "vllm 0.7.2, torchaudio 2.5.1, torchvision 0.20.1, xformers 0.0.28.post3")
    assert "undefined symbol" in first["cause"]
    assert first["see"] == ["vllm-c-ext-torch-mismatch"]
    assert first["fix"]["requires"] == ["torch==2.5.1"]
    assert first["fix"]["commands"] == [f"{_pip(report)} install 'torch==2.5.1'"]
    # the matrix knows which vLLM releases accept the installed torch
    assert any(e.startswith("vllm 0.8.0") and e.endswith("accept torch 2.6.0") for e in _texts(first))
    assert "keep torch 2.6.0 and move vllm" in first["fix"]["advice"]
    assert [f["id"] for f in report["findings"]].count("torch-pin-broken-extension") == 1


def test_vllm_072_with_its_dependencies_missing_ranks_the_torch_pin_first(tmp_path, doctor):
    from tests.support.fakeenv import make_env

    # torch 2.6.0 beside vLLM 0.7.2, installed with --no-deps: none of vLLM's other dependencies
    python = make_env(tmp_path / "env", {"torch": "2.6.0", "vllm": "0.7.2"}, deps=False)
    code, report = doctor("--python", str(python), "--gpus", "1xH100", "--driver", "550.54.15")
    assert code == 1
    found = [f for f in report["findings"] if f["status"] == "found"]
    assert found[0]["id"] == "torch-pin-broken-extension"
    assert "undefined symbol" in found[0]["cause"] and found[0]["see"] == ["vllm-c-ext-torch-mismatch"]
    (missing,) = [f for f in found if f["id"] == "missing-requirement"]
    assert {"xformers==0.0.28.post3", "transformers>=4.48.2"} <= set(missing["fix"]["requires"])
    (command,) = missing["fix"]["commands"]
    assert command.startswith(f"{_pip(report)} install ") and "'xformers==0.0.28.post3'" in command
    assert missing["consequence"] == "wont-start"
    assert len({f["id"] for f in found}) == len(found)  # one finding per problem


def test_cpu_build_on_a_gpu_machine(env, doctor):
    python = env(torch="2.13.0+cpu")
    code, report = doctor("--python", python, "--gpus", "8xH100", "--driver", "580.65.06")
    assert code == 1
    f = _finding(report, "torch-cpu-only-build")
    assert f["fix"]["commands"] == [f"{_pip(report)} uninstall -y torch", f"{_pip(report)} install 'torch==2.13.0'"]
    assert report["facts"]["python"]["executable"].startswith(str(python).rsplit("/bin/", 1)[0])
    assert [x["id"] for x in report["findings"]].count("torch-cpu-only-build") == 1  # once, not check + catalog


def test_fail_on_threshold_and_clean_exit(env, doctor):
    python = env(torch="2.13.0")
    code, report = doctor("--python", python, "--gpus", "cpu")
    assert code == 0, report["findings"]
    code_info, _ = doctor("--python", python, "--gpus", "1xT4", "--driver", "580.65.06", "--fail-on", "info")
    assert code_info == 1  # a T4 has no bf16: an info finding


def test_json_is_deterministic(env, doctor):
    python = env(torch="2.5.1+cu124", vllm="0.7.2")
    args = ("--python", python, "--gpus", "2xA100", "--driver", "470.82.01")
    assert doctor(*args) == doctor(*args)


def test_bad_facts_file_is_one_line_exit_2(tmp_path):

    from tests.support.main import compat_main  # the entry point, compat.cli.main, wraps CompatError

    broken = tmp_path / "facts.json"
    broken.write_text('{"schema_version": 1, "python": {', encoding="utf-8")
    proc = compat_main("doctor", "--facts", str(broken))
    assert proc.returncode == 2
    assert proc.stderr.count(b"\n") == 1 and b"not JSON" in proc.stderr
    assert b"Traceback" not in proc.stderr


def _extra_findings(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["id"] == "unsatisfied-extra-requirement" and f["status"] == "found"]


def test_an_extra_asked_for_is_judged_and_one_the_catalog_names_is_reported_once(env, doctor, tmp_path):
    # Installed beside trl, nothing says trl[liger] was wanted: its range is shown at info, the set passes.
    _, report = doctor("--python", env(trl="0.15.2", liger_kernel="0.5.2"), "--gpus", "cpu")
    (extra,) = _extra_findings(report)
    assert extra["title"] == "trl 0.15.2 [liger] requires liger-kernel==0.5.3, but liger-kernel 0.5.2 is installed"
    assert extra["severity"] == "info"
    assert any("nothing asks for trl[liger] by name" in e for e in _texts(extra))
    # A requirements line that names the extra is what `pip install trl[liger]` would check: an error.
    req = tmp_path / "requirements.txt"
    req.write_text("trl[liger]==0.15.2\nliger-kernel==0.5.2\n", encoding="utf-8")
    code, report = doctor("-r", str(req), "--gpus", "cpu")
    (extra,) = _extra_findings(report)
    assert extra["severity"] == "error" and code == 1
    assert "trl[liger] is asked for by name" in _texts(extra)
    # The same pins without the extra named: info again.
    req.write_text("trl==0.15.2\nliger-kernel==0.5.2\n", encoding="utf-8")
    _, report = doctor("-r", str(req), "--gpus", "cpu")
    assert [f["severity"] for f in _extra_findings(report)] == ["info"]
    # trl 0.18's [vllm] extra wants vllm>=0.8.3; the catalog's entry for that pair says why: only it is reported
    _, report = doctor("--python", env(trl="0.18.0", vllm="0.7.3"), "--gpus", "cpu")
    found = ids(report)
    assert "trl-vllm-serve-vllm-too-old" in found and "unsatisfied-extra-requirement" not in found
    # torch under transformers[torch] is there for vLLM's sake: that extra is not in effect
    _, report = doctor("--python", env(trl="0.19.0", vllm="0.9.1", transformers="4.52.4", accelerate="1.7.0"), "--gpus", "cpu")
    assert "unsatisfied-extra-requirement" not in ids(report)


def test_a_script_that_uses_vllm_puts_trls_vllm_extra_in_effect(env, doctor, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("from trl import GRPOConfig\nconfig = GRPOConfig(use_vllm=True)\n", encoding="utf-8")
    python = env(trl="0.15.2", vllm="0.6.6")
    code, report = doctor("--python", python, "--gpus", "cpu", "--script", str(script))
    (extra,) = _extra_findings(report)
    assert extra["title"] == "trl 0.15.2 [vllm] requires vllm==0.7.2, but vllm 0.6.6 is installed"
    assert extra["severity"] == "error" and code == 1
    assert f"{script} sets use_vllm=True" in _texts(extra)
    # without the script, the installed vLLM alone does not say trl[vllm] was wanted
    _, report = doctor("--python", python, "--gpus", "cpu")
    assert [f["severity"] for f in _extra_findings(report)] == ["info"]


def test_the_text_report_names_the_consequence_the_catalog_entry_and_what_strict_counts(env):
    from typer.testing import CliRunner

    from compat.cli import app

    python = env(torch="2.6.0", vllm="0.7.2")
    result = CliRunner().invoke(app, ["doctor", "--python", python, "--gpus", "2xH100", "--driver", "550.54.15"])
    lines = result.stdout.splitlines()
    assert lines[0] == f"Judging {python} (named with --python)"
    first = next(line for line in lines if line.startswith(("✗", "!")))
    assert first.startswith("✗ error · broken build  Compiled against torch 2.5.1")
    assert any(line.strip().startswith("ends in vllm-c-ext-torch-mismatch") for line in lines)
    # declared GPUs: /dev/shm (an error-level check) cannot be judged; no launcher: a warning-level one
    summary = " ".join(result.stdout.split("\n\n")[-1].split())
    assert "2 check(s) could not run (see above); --strict counts 1 of them as failures (error or worse)." in summary


def test_a_torch_import_slower_than_its_bound_cannot_be_checked(tmp_path, doctor, monkeypatch):
    """A loaded machine: torch imports, only slowly. That is "cannot check" with the bound, never an error."""
    from tests.support.fakeenv import make_env

    python = make_env(tmp_path / "env", {"torch": "2.5.1+cu124"})
    pkg = next((tmp_path / "env" / "lib").glob("python3*/site-packages")) / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setenv("COMPAT_TORCH_TIMEOUT", "1")
    code, report = doctor("--python", str(python), "--gpus", "1xH100", "--driver", "550.54.15", "--fail-on", "error")
    assert "torch-import-fails" not in ids(report)
    (slow,) = [f for f in report["findings"] if f["id"] == "torch-import-fails"]
    assert slow["status"] == "cannot-check"
    assert slow["unknown"][0].startswith("import torch did not finish within 1 s")
    assert code == 0


def test_run_lines_name_an_environment_directory_s_interpreter(env, doctor):
    python = env(torch="2.13.0+cpu")
    root = str(python).rsplit("/bin/", 1)[0]
    _, report = doctor("--python", root, "--gpus", "8xH100", "--driver", "580.65.06")
    f = _finding(report, "torch-cpu-only-build")
    assert all(c.startswith(f"{root}/bin/python") and " -m pip " in c for c in f["fix"]["commands"]), f["fix"]["commands"]
