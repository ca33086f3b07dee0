"""The only code in compat that touches the host.

`probe(request, matrix)` gathers Facts: the interpreter and its packages (or a requirements
file), the torch build, the NVIDIA driver/GPUs/topology, the launch context and, on request,
a training script. The slow parts run concurrently: the interpreter child (in-process for compat's own
interpreter) and the hardware probe (NVML in a child process, nvidia-smi as fallback) each in its own thread;
torch's build is read from its files, and whether its libraries load from their ELF files (else they are loaded in a
child), torch imported only where that leaves a question (`torch.py`, `torch_libs.py`).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

from compat.errors import UsageError
from compat.model.facts import SCHEMA_VERSION, Chosen, Facts, Hardware, HardwareSource, Launch, TorchBuild
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    # Only a type here: the NVML child imports this package and must not pay for loading the matrix.
    from compat.matrix import Matrix

__all__ = ["MatrixSource", "ProbeRequest", "matrix_now", "probe", "probe_launch_and_script"]

if TYPE_CHECKING:
    from collections.abc import Callable

MatrixSource = Union["Matrix", "Callable[[], Matrix]"]
"""The matrix, or the call that gives it: a caller may load it meanwhile (compiling it on a cold cache costs about
as much as the probe's children, which mostly wait), and the probe asks for it only where a parse needs it."""


def matrix_now(matrix: MatrixSource) -> Matrix:
    """The matrix itself, waiting for it where it is still being loaded."""
    return matrix() if callable(matrix) else matrix


@dataclass(frozen=True, kw_only=True)
class ProbeRequest:
    python: Path | None = None
    """An interpreter or an environment directory to inspect; None: the activated environment, else
    the python on PATH when compat runs from an isolated install, else the one running compat."""
    requirements: Path | None = None
    """Read packages from this requirements file instead of the installed ones."""
    hardware: bool = True
    """False when the GPUs are declared: NVML and nvidia-smi are not touched at all."""
    accelerate_config: Path | None = None
    """accelerate config file; None means the default one under the Hugging Face home."""
    script: Path | None = None
    """Training script to read (never run)."""
    timeout: float = 10.0
    """Seconds allowed to each external command but the torch import."""
    torch_timeout: float | None = None
    """Seconds allowed to `import torch`; None: at least 60 s, more where the interpreter starts slowly."""
    load_torch: bool = False
    """Load torch's libraries in a child even where their files settle that they load (COMPAT_TORCH_LOAD)."""
    cache_dir: Path | None = None
    """compat's cache directory (the torch import report is kept there); None: no cache."""
    import_torch: bool = True
    """False: torch is not imported, only the interpreter child runs (its version, markers and packages). A lock
    needs no more: it replaces the installed torch with the one it resolves, and the import is the slow part."""
    host: bool = True
    """Read this machine beyond the interpreter: its toolchain, launch variables, /dev/shm and GPUs. False when a
    requirements file is judged on its own (a CI job or a Docker stage must get the file's verdict, not the
    runner's)."""


def probe(request: ProbeRequest, matrix: MatrixSource) -> Facts:
    """Facts about this host (or another interpreter on it); never raises on a host quirk.

    Raises UsageError when the request itself cannot be served (an interpreter that does not
    run, an unpinned requirements file, a named config file or script that does not exist or is a FIFO or a device).
    """
    from compat.sources.probe.interpreter import fetch_interpreter
    from compat.sources.probe.launch import probe_launch
    from compat.sources.probe.nvidia import probe_hardware
    from compat.sources.probe.script import read_script
    from compat.sources.probe.selection import Selected, select_interpreter
    from compat.sources.probe.system import probe_system
    from compat.sources.probe.torch import from_metadata, read_torch

    selected = select_interpreter(request.python)
    python = selected.python
    with ThreadPoolExecutor(max_workers=3) as pool:
        # A requirements file names the packages: the interpreter's own are not read at all.
        installed = request.requirements is None
        interpreter = pool.submit(fetch_interpreter, python, timeout=request.timeout, packages=installed)
        hardware = pool.submit(probe_hardware, timeout=request.timeout) if request.hardware and request.host else None
        tools = pool.submit(probe_system, timeout=request.timeout) if request.host else None
        launch = probe_launch(request.accelerate_config) if request.host else _file_launch(request.accelerate_config)
        script = read_script(request.script) if request.script else None
        try:
            found = interpreter.result()
        except UsageError:
            if selected.fallback is None:
                raise  # the user named it, or activated it: theirs to see
            # A `python` on PATH that does not run (a pyenv shim without a version) is not where
            # training runs either: judge compat's own interpreter rather than stop.
            selected = Selected(python=selected.fallback, chosen=Chosen.OWN)
            python = selected.python
            found = fetch_interpreter(python, timeout=request.timeout, packages=installed)
        if request.requirements is not None:
            from compat.sources.probe.requirements import read_requested, read_requirements

            packages = read_requirements(request.requirements, matrix_now(matrix), markers=found.python.markers)
            requested = read_requested(request.requirements, markers=found.python.markers)
        else:
            packages = found.distributions
            requested = ()
        torch_dist = next((d for d in packages if d.name == "torch"), None)
        torch: TorchBuild | None | Unknown
        if not request.import_torch:
            torch = None if torch_dist is None else Unknown(reason=NOT_IMPORTED)
        elif request.requirements is not None:
            torch = None if torch_dist is None else from_metadata(
                torch_dist.version, matrix_now(matrix), import_error=None, why=f"read from {request.requirements}, not imported"
            )
        else:
            torch = read_torch(
                python, directory=found.torch_dir, dist=torch_dist, packages=packages, matrix=matrix,
                timeout=request.torch_timeout, stamp=found.torch_stamp, cache_dir=request.cache_dir,
                load=request.load_torch,
            )
        hw = hardware.result() if hardware is not None else _not_probed(request.host)
        system = dataclasses.replace(tools.result(), platform=found.platform) if tools is not None else Unknown(reason=NOT_THE_HOST)
    return Facts(
        schema_version=SCHEMA_VERSION,
        python=dataclasses.replace(found.python, chosen=selected.chosen),
        packages=packages,
        torch=torch,
        hardware=hw,
        launch=launch,
        script=script,
        system=system,
        requested=requested,
    )


def probe_launch_and_script(facts: Facts, *, accelerate_config: Path | None, script: Path | None) -> Facts:
    """A saved snapshot with the accelerate config and/or the script read from this host."""
    import os

    from compat.sources.probe.launch import read_accelerate_config
    from compat.sources.probe.script import read_script

    if accelerate_config is not None:
        launch = dataclasses.replace(facts.launch, accelerate=read_accelerate_config(accelerate_config, os.environ))
        facts = dataclasses.replace(facts, launch=launch)
    if script is not None:
        facts = dataclasses.replace(facts, script=read_script(script))
    return facts


NOT_IMPORTED = "not imported: a lock resolves torch rather than judging the installed one"
NOT_THE_HOST = "not read: a requirements file is judged on its own (--host reads this machine too)"


def _not_probed(host: bool = True) -> Hardware:
    why = Unknown(reason="hardware not probed (declared on the command line)" if host else NOT_THE_HOST)
    return Hardware(source=HardwareSource.DECLARED, driver=why, driver_cuda=why, gpus=why, links=why)


def _file_launch(accelerate_config: Path | None) -> Launch:
    """The launch of a requirements file judged on its own: only an accelerate config the user named is read."""
    from compat.sources.probe.launch import infer_launcher, read_accelerate_config

    return Launch(
        launcher=infer_launcher({}),
        accelerate=read_accelerate_config(accelerate_config, {}) if accelerate_config is not None else None,
        env={},
        shm_bytes=Unknown(reason=NOT_THE_HOST),
        container=None,
    )
