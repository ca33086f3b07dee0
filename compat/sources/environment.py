"""Which environment is judged, and its facts gathered in one pass.

`gather` is the one way a command gets the `Facts` it judges: a saved snapshot or a live probe, the
GPUs' compute capabilities completed from the matrix, the declared values laid on top and every
value bounded to a shape the checks can read. Each derived fact is computed once, here, and the
caller receives the finished record.

Imports stay lazy: the NVML child imports this package and must not pay for the matrix or the probes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compat.model.facts import Facts
    from compat.sources.declared import Declared
    from compat.sources.probe import MatrixSource
    from compat.sources.settings import Settings


@dataclass(frozen=True, kw_only=True)
class Environment:
    """Which environment is judged. Neither `facts_file` nor `python`: a live probe of the environment
    the user means (the activated venv or conda env, else the python on PATH beside an isolated
    compat, else this interpreter; compat.sources.probe.selection)."""

    facts_file: Path | None = None
    """A saved `compat facts` snapshot, read instead of probing."""
    python: Path | None = None
    """An interpreter or an environment directory to probe live."""
    requirements: Path | None = None
    """Judge the pinned set of this requirements file instead of the installed packages (live probe only)."""
    accelerate_config: Path | None = None
    """accelerate config file (default: the one under the Hugging Face home); read on this host."""
    script: Path | None = None
    """Training script to read (never run); read on this host."""
    host: bool = False
    """With `requirements`: read this machine's toolchain, launch variables and GPUs too. Without it the file is
    judged alone, and a check that needs the machine cannot be checked (the same verdict on any machine)."""

    def named(self) -> bool:
        """The caller named something about the environment (so its errors are theirs to see)."""
        return any(v is not None for v in (self.facts_file, self.python, self.requirements, self.accelerate_config, self.script))


def gather(environment: Environment, declared: Declared, matrix: MatrixSource, *, settings: Settings,
           base: Facts | None = None, import_torch: bool = True) -> Facts:
    """The facts of `environment` with `declared` laid over them; raises UsageError (two sources named, a bad
    declared value, an interpreter that does not run) and FactsError (a snapshot with values compat cannot read).

    `base`: facts already in hand (a lock's fully declared target), read and probed no further. `import_torch`
    False: a live probe learns the interpreter (version, markers, packages) without importing torch in a child.
    `matrix` may be the call that gives it, still loading: it is waited for where first needed."""
    from compat.errors import UsageError
    from compat.sources.bounds import bound_facts
    from compat.sources.declared import apply_declared, complete_gpus
    from compat.sources.probe import matrix_now

    env = environment
    if env.facts_file is not None and env.python is not None:
        raise UsageError("--facts and --python both name the environment; give one")
    if base is not None:
        origin = "the declared target"
    elif env.facts_file is not None:
        base = _read_facts(env.facts_file)
        if env.script is not None or env.accelerate_config is not None:
            from compat.sources.probe import probe_launch_and_script

            base = probe_launch_and_script(base, accelerate_config=env.accelerate_config, script=env.script)
        origin = str(env.facts_file)
    else:
        from compat.sources.probe import ProbeRequest, probe

        base = probe(
            ProbeRequest(
                python=env.python,
                requirements=env.requirements,
                hardware=declared.gpus is None,  # declared GPUs: never wait on nvidia-smi in a Docker build
                host=env.requirements is None or env.host,
                accelerate_config=env.accelerate_config,
                script=env.script,
                cache_dir=settings.cache_dir,
                torch_timeout=settings.torch_timeout,
                load_torch=settings.torch_load,
                import_torch=import_torch,
            ),
            matrix,
        )
        origin = "the probed environment"
    matrix = matrix_now(matrix)
    if declared.gpus is None:  # declared GPUs replace the seen ones whole: nothing of theirs to complete
        base = complete_gpus(base, matrix.gpus)
    return bound_facts(apply_declared(base, declared, matrix), origin=origin)


def _read_facts(path: Path) -> Facts:
    from compat.model.facts import load_facts
    from compat.sources.facts_file import read_text

    return load_facts(read_text(path), origin=str(path))
