"""`compat lock` on the shipped matrix with a fully declared target (nothing is probed)."""

from __future__ import annotations

from typer.testing import CliRunner

from compat.cli import app

runner = CliRunner()


def test_lock_grpo_stack_is_deterministic():
    args = ["lock", "trl[vllm]", "--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "3.12"]
    first = runner.invoke(app, args)
    second = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert first.stdout == second.stdout
    assert "\ntrl[vllm]==" in first.stdout and "\ntorch==" in first.stdout


def test_lock_unsatisfiable_exits_1_with_a_chain():
    result = runner.invoke(app, ["lock", "vllm==0.7.2", "--gpus", "1xRTX5090", "--driver", "580.95.05", "--python-version", "3.11"])
    assert result.exit_code == 1
    assert "sm_120" in result.stderr and "torch==2.5.1" in result.stderr


def test_lock_rejects_a_bad_python_version():
    result = runner.invoke(app, ["lock", "trl", "--gpus", "8xH100", "--driver", "580.95.05", "--python-version", "three"])
    assert result.exit_code != 0
