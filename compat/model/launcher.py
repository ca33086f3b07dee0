"""The launcher enum and package-name spelling: what the compiled matrix's `when` tables hold from the facts model.

Here, not in compat.model.facts, so that reading the compiled matrix back (`compat explain --no-env`) does not
build the facts model's dozen dataclasses: unpickling a `When` needs `Launcher` only. compat.model.facts
re-exports both.
"""

from __future__ import annotations

import enum


class Launcher(str, enum.Enum):
    """How training is started; the values are the words of facts files, --launcher and `when.launcher`."""

    PYTHON = "python"  # plain `python train.py`: one process, whatever the GPU count
    TORCHRUN = "torchrun"
    ACCELERATE = "accelerate"
    DEEPSPEED = "deepspeed"
    SRUN = "srun"  # Slurm's srun starts the ranks itself (--ntasks-per-node), one process per task

    def __str__(self) -> str:
        return self.value


def canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))
