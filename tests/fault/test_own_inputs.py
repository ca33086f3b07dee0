"""`-o` naming a file the same run reads: the input is kept, the run says why in one line.

`compat doctor -r requirements.txt -o requirements.txt` (or a log explained into itself, a facts file
judged into itself) replaced the input with its own report before compat.regular_file remembered
what it opened and compat.atomic refused to write over it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat.model.facts import dump_facts
from tests.fault.fakes import REPO, one_line_error
from tests.fault.inputs import facts_with
from tests.support.main import compat_main

DECLARED = ("--gpus", "1xH100", "--driver", "550.54.15", "--no-config")
REFUSED = "an input of this run; compat does not overwrite what it reads"


@pytest.fixture()
def inputs(tmp_path):
    (tmp_path / "requirements.txt").write_text("trl==0.15.2\nvllm==0.7.2\n")
    (tmp_path / "base.txt").write_text("torch==2.5.1\n")
    (tmp_path / "top.txt").write_text("-r base.txt\ntrl==0.15.2\n")
    (tmp_path / "train.log").write_text("ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata'\n")
    (tmp_path / "facts.json").write_text(dump_facts(facts_with(torch="2.5.1+cu124")))
    (tmp_path / "train.py").write_text("from trl import SFTTrainer\n")
    return tmp_path


RUNS = {
    "requirements": ("doctor", "-r", "@requirements.txt", *DECLARED, "-o", "@requirements.txt"),
    "included requirements": ("doctor", "-r", "@top.txt", *DECLARED, "-o", "@base.txt"),
    "log": ("explain", "@train.log", "--no-env", "--no-config", "-o", "@train.log"),
    "facts judged": ("doctor", "--facts", "@facts.json", "--no-config", "-o", "@facts.json"),
    "facts rewritten": ("facts", "--facts", "@facts.json", "-o", "@facts.json"),
    "script": ("report", "--facts", "@facts.json", "--script", "@train.py", "--no-config", "-o", "@train.py"),
}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_o_naming_an_input_is_refused_and_the_input_kept(inputs, run):
    args = [str(inputs / a[1:]) if a.startswith("@") else a for a in RUNS[run]]
    target = args[-1]
    before = Path(target).read_bytes()
    result = compat_main(*args)
    assert result.returncode == 2, result
    assert one_line_error(result) == f"compat: error: cannot write {target}: {REFUSED}"
    assert Path(target).read_bytes() == before


def test_standard_input_redirected_from_the_output_is_refused(inputs):
    log = inputs / "train.log"
    before = log.read_bytes()
    with open(log, "rb") as stdin:
        result = subprocess.run([sys.executable, "-m", "compat", "explain", "-", "--no-env", "--no-config", "-o", str(log)],
                                stdin=stdin, capture_output=True, timeout=60,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2, result
    assert one_line_error(result).endswith(REFUSED)
    assert log.read_bytes() == before


def test_a_file_an_earlier_run_in_the_same_process_read_is_written(inputs):
    # The inputs are the run's: a program (or a test) that runs compat twice may write what the first run read.
    assert compat_main("explain", str(inputs / "train.log"), "--no-env", "--no-config").returncode == 0
    result = compat_main("doctor", "-r", str(inputs / "requirements.txt"), *DECLARED, "-o", str(inputs / "train.log"))
    assert result.returncode in (0, 1), result
    assert (inputs / "train.log").read_text().strip()
    assert "No module named" not in (inputs / "train.log").read_text()
