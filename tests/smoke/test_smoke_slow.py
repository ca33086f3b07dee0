"""`compat smoke` run for real on this test venv (torch 2.13.0 CPU, trl, peft, accelerate on the default Python),
and on venvs that shadow a package (or a few that go together) with real older releases, each failing at its stage
with explain's cause.

The broken venvs hold a .pth file that adds this venv's site-packages (torch is reused, not copied) and the
packages installed with `pip install --no-deps --target` from a wheelhouse of real releases: COMPAT_SMOKE_WHEELHOUSE
names it (.ci/run downloads it; without it those tests skip, so the default run needs no network).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.support.golden import check_golden
from tests.support.paths import GOLDEN

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="trl is not installed (only the default Python's "
                       "test extra has the training stack)"),
]


def _smoke(python: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compat", "smoke", "--python", python, *args], capture_output=True,
                          text=True, timeout=900, env={**os.environ, "NO_COLOR": "1"})


def _normalised(text: str, python: str) -> str:
    """Times, losses, versions and the interpreter's path vary from run to run; the stages and steps do not."""
    text = text.replace(python, "PYTHON")
    text = re.sub(r"\d+\.\d+ s\b", "T s", text)
    text = re.sub(r"\(T s\)|\d+\.\d s", "T s", text)
    text = re.sub(r" +T s", " T s", text)  # the time column's padding follows the number's width
    text = re.sub(r"loss -?\d+\.\d+", "loss L", text)
    # Versions of what the test extra does not pin (tokenizers, safetensors) move with their releases.
    return re.sub(r"\b\d+\.\d+\.\d+(\+\w+)?", "V", text)


def test_this_venv_trains_sft_dpo_grpo_lora_and_two_processes():
    python = sys.executable
    done = _smoke(python, "--trainer", "sft,dpo,grpo", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    stages = {s["stage"]: s for s in doc["stages"]}
    assert stages["import"]["status"] == "pass" and stages["train"]["status"] == "pass"
    assert stages["collective"]["status"] == "pass" and stages["device"]["status"] == "skipped"
    steps = {s["name"]: s["status"] for s in stages["train"]["steps"]}
    for name in ("sft", "dpo", "grpo", "sft+lora", "save and reload (sft)", "accelerate launch x2: sft"):
        assert steps[name] == "pass", name
    from compat.model import codec
    from compat.model.smoke import SmokeReport, StageResult
    from compat.report.smoke import render_text

    report = SmokeReport(python=doc["python"], stages=tuple(codec.decode(StageResult, s) for s in doc["stages"]),
                         budget_s=doc["budget_s"], seconds=doc["seconds"], trainers=tuple(doc["trainers"]))
    check_golden(GOLDEN / "smoke-cpu-venv.txt", _normalised(render_text(report), python))


BROKEN = [
    # (the wheels that shadow, space-separated, the stage that must fail, explain's verdict, its cause id)
    pytest.param("accelerate-1.0.1-py3-none-any.whl", "train", "known", "transformers-trainer-needs-accelerate",
                 id="accelerate-too-old-for-transformers"),
    pytest.param("datasets-2.14.5-py3-none-any.whl", "import", "known", "api:huggingface_hub:HfFolder",
                 id="datasets-too-old-for-the-hub"),
    # The old transformers states the tokenizers it needs at import: a known mismatch with the side to change.
    pytest.param("transformers-4.57.3-py3-none-any.whl", "import", "known", "stated-version:tokenizers",
                 id="transformers-too-old-for-trl"),
    # An fsspec older than datasets 5.2 declares (>=2023.1.0): `import datasets` fails on fsspec.implementations.dirfs,
    # peft and trl on huggingface_hub's HfFileSystem (fsspec.callbacks.TqdmCallback).
    pytest.param("fsspec-2022.1.0-py3-none-any.whl", "import", "known", "fsspec-too-old-for-datasets",
                 id="fsspec-too-old-for-datasets"),
    # This venv's peft 0.21.2 over a stack pinned to transformers 4.41.2 (with the tokenizers, huggingface-hub and
    # datasets that transformers accepts, so that only peft fails): peft imports EncoderDecoderCache, added in 4.42.
    pytest.param("transformers-4.41.2-py3-none-any.whl tokenizers-0.19.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl "
                 "huggingface_hub-0.36.2-py3-none-any.whl datasets-3.6.0-py3-none-any.whl", "import", "known",
                 "peft-encoderdecodercache-import", id="peft-too-new-for-transformers"),
]


def _broken_venv(root: Path, wheels: list[Path]) -> str:
    venv.EnvBuilder(with_pip=False).create(root)
    python = str(root / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    base = sysconfig.get_paths()["purelib"]
    Path(site, "zz-compat-test-base.pth").write_text(f"import site; site.addsitedir({base!r})\n", encoding="utf-8")
    # --no-compile: pip would compile every module of the shadowing wheels (transformers: thousands) and the smoke's
    # children import a few hundred of them, compiled as they are imported; 7 s of CPU less for each transformers
    # set (docs/testing.md, "What the suite costs").
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile", "--target",
                    site, *map(str, wheels)], check=True)
    return python


@pytest.mark.parametrize(("wheel", "stage", "verdict", "cause"), BROKEN)
def test_a_broken_environment_fails_at_its_stage_with_the_cause(tmp_path, wheel, stage, verdict, cause):
    house = os.environ.get("COMPAT_SMOKE_WHEELHOUSE")
    names = wheel.split()  # several wheels shadow together (a transformers with the tokenizers it accepts)
    absent = [n for n in names if not house or not Path(house, n).is_file()]
    if absent:
        pytest.skip(f"COMPAT_SMOKE_WHEELHOUSE does not hold {', '.join(absent)} (.ci/run downloads it)")
    python = _broken_venv(tmp_path / "venv", [Path(str(house), n) for n in names])
    # The stage under test, and import before it: the stages after a failing one, and collective and kernels (torch
    # alone, which no broken set shadows), cost 10-30 s of CPU each and are asserted on by no test here.
    chosen = ["import"] if stage == "import" else ["import", stage]
    done = _smoke(python, "--trainer", "sft", "--processes", "1", "--stages", ",".join(chosen), "--json")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads(done.stdout)
    failed = [s for s in doc["stages"] if s["status"] == "fail"]
    assert failed[0]["stage"] == stage
    assert [s["stage"] for s in doc["stages"] if s["status"] != "skipped"] == chosen
    assert failed[0]["diagnosis"]["verdict"] == verdict
    assert failed[0]["diagnosis"]["cause_id"] == cause
