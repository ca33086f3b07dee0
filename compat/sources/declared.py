"""Hardware and launch facts given on the command line, laid over the probed ones.

A Docker build or a CI runner has no GPU, yet the environment it builds will run on one:
`--gpus 8xH100 --driver 550.54.15` states the target, and the report marks those facts as
declared. Pure: no I/O, the GPU models come from the matrix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from compat.errors import UsageError
from compat.matrix.cuda import driver_version
from compat.matrix.gpus import GpuModel, GpuTable
from compat.model.launcher import Launcher
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.model.facts import Facts, Gpu, Link

LAUNCHERS = tuple(launcher.value for launcher in Launcher)
MAX_GPUS = 64

_NO_GPUS = ("cpu", "none")
# "8xH100", "8 x H100", "8*H100", "H100"; several groups joined by commas.
_GROUP = re.compile(r"^(?:([0-9]{1,18})\s*[xX×*]\s*)?([A-Za-z][A-Za-z0-9 _.-]*)$")  # 18 digits: int() stays cheap


@dataclass(frozen=True, kw_only=True)
class Declared:
    gpus: str | None = None
    """"8xH100", "2xA100-80GB", "1xRTX5090", "H100" (one GPU), "4xH100,4xA100", or "cpu" (none)."""
    driver: str | None = None
    """NVIDIA driver version ("550.54.15")."""
    launcher: str | None = None
    """python | torchrun | accelerate | deepspeed."""

    def no_gpus(self) -> bool:
        """`--gpus cpu` (or `none`): a machine declared without NVIDIA GPUs (and so without a driver to declare)."""
        return self.gpus is not None and self.gpus.strip().lower() in _NO_GPUS


def parse_gpu_models(spec: str, table: GpuTable) -> tuple[GpuModel, ...]:
    """The model of each declared GPU, in order; () for "cpu". Raises UsageError."""
    text = spec.strip()
    if text.lower() in _NO_GPUS:
        return ()
    if not text:
        raise UsageError("--gpus is empty (expected e.g. 8xH100, 2xA100-80GB or cpu)")
    models: list[GpuModel] = []
    for group in text.split(","):
        m = _GROUP.match(group.strip())
        if not m:
            raise UsageError(f"--gpus {spec!r}: cannot read {group.strip()!r} (expected COUNTxMODEL, e.g. 8xH100, or cpu)")
        count = int(m.group(1)) if m.group(1) is not None else 1
        if count < 1:
            raise UsageError(f"--gpus {spec!r}: a GPU count must be at least 1")
        name = m.group(2).strip()
        model = table.find(name)
        if model is None:
            raise UsageError(f"--gpus {spec!r}: unknown GPU model {name!r}{_suggest(name, table)}")
        if len(models) + count > MAX_GPUS:
            raise UsageError(f"--gpus {spec!r}: more than {MAX_GPUS} GPUs on one machine")
        models.extend([model] * count)
    return tuple(models)


def parse_gpus(spec: str, table: GpuTable) -> tuple[Gpu, ...]:
    """Declared GPUs as Gpu records (index 0..n-1, canonical name, its capability and memory)."""
    return tuple(_gpu(i, model) for i, model in enumerate(parse_gpu_models(spec, table)))


def declared_links(models: tuple[GpuModel, ...]) -> tuple[Link, ...]:
    """Every pair's link as the boards are usually built: NVLink on SXM boards, PCIe otherwise."""
    from compat.model.facts import Interconnect, Link  # the facts model only when hardware is declared

    links = []
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            ma, mb = models[a], models[b]
            if ma is mb and (ma.interconnect == "nvlink" or (ma.interconnect == "nvlink-bridge" and a // 2 == b // 2)):
                links.append(Link(a=a, b=b, interconnect=Interconnect.NVLINK, nvlinks=ma.nvlinks, p2p=Unknown(reason="declared")))
                continue
            # GeForce and workstation boards mostly have P2P over PCIe disabled by the driver.
            p2p: bool | Unknown = False if (ma.consumer or mb.consumer) else Unknown(reason="declared")
            links.append(Link(a=a, b=b, interconnect=Interconnect.PCIE_HOST_BRIDGE, p2p=p2p))
    return tuple(links)


def apply_declared(facts: Facts, declared: Declared, matrix: Matrix) -> Facts:
    """`facts` with every declared value replacing the probed one; raises UsageError on bad input."""
    from compat.model.facts import Hardware, HardwareSource

    names: list[str] = []
    launch = facts.launch
    if declared.launcher is not None:
        try:
            launcher = Launcher(declared.launcher.strip().lower())
        except ValueError:
            raise UsageError(f"--launcher {declared.launcher!r} is not one of {', '.join(LAUNCHERS)}") from None
        launch = replace(launch, launcher=launcher)
        names.append("launcher")

    driver: str | None = None
    if declared.driver is not None:
        driver = declared.driver.strip()
        try:
            driver_version(driver)
        except ValueError:
            raise UsageError(f"--driver {declared.driver!r} is not a driver version (e.g. 550.54.15)") from None

    hw = facts.hardware
    if declared.gpus is not None:
        models = parse_gpu_models(declared.gpus, matrix.gpus)
        names.append("gpus")
        if not models:
            if driver is not None:
                raise UsageError("--gpus cpu declares a machine without NVIDIA GPUs or driver; drop --driver")
            hw = Hardware(source=HardwareSource.DECLARED, driver=None, driver_cuda=None, gpus=(), links=())
        else:
            hw = replace(
                hw,
                source=HardwareSource.DECLARED,
                gpus=tuple(_gpu(i, model) for i, model in enumerate(models)),
                links=declared_links(models),
            )
            if driver is None and not isinstance(hw.driver, str):
                # None would mean "this machine has no driver": wrong for the declared target.
                hw = replace(
                    hw,
                    driver=Unknown(reason="not declared; pass --driver"),
                    driver_cuda=Unknown(reason="driver not declared; pass --driver"),
                )
    if driver is not None:
        top = matrix.cuda.max_cuda(driver)
        driver_cuda: str | Unknown = (
            top if top is not None else Unknown(reason=f"driver {driver} is older than every CUDA toolkit in the matrix")
        )
        hw = replace(hw, driver=driver, driver_cuda=driver_cuda)
        names.append("driver")

    if not names:
        return facts
    return replace(
        facts,
        hardware=hw,
        launch=launch,
        declared=tuple(sorted(set(facts.declared) | set(names))),
    )


def complete_gpus(facts: Facts, table: GpuTable) -> Facts:
    """GPUs whose compute capability the tool left out take their model's from matrix/gpus.toml.

    nvidia-smi before R510 has no `compute_cap` field, so an A100 seen through an old driver
    (or an old nvidia-smi bundled in a snap) would otherwise stay "sm_?" for every check.
    """
    gpus = facts.hardware.gpus
    if isinstance(gpus, Unknown) or not any(isinstance(g.compute_capability, Unknown) for g in gpus):
        return facts
    filled = []
    for gpu in gpus:
        model = table.find(gpu.name) if isinstance(gpu.compute_capability, Unknown) else None
        filled.append(replace(gpu, compute_capability=model.compute_capability) if model is not None else gpu)
    return replace(facts, hardware=replace(facts.hardware, gpus=tuple(filled)))


def _gpu(index: int, model: GpuModel) -> Gpu:
    from compat.model.facts import Gpu

    return Gpu(
        index=index,
        name=model.name,
        compute_capability=model.compute_capability,
        memory_mib=model.memory_gib * 1024,
        bus_id=Unknown(reason="declared"),
    )


def _suggest(name: str, table: GpuTable) -> str:
    import difflib  # only for a GPU name the table does not know: every `compat explain` imports this module

    known = table.names()
    by_upper = {n.upper(): n for n in known}
    close = difflib.get_close_matches(name.upper(), list(by_upper), n=3, cutoff=0.6)
    if close:
        return f" (did you mean {', '.join(by_upper[c] for c in close)}?)"
    return f" (known: {', '.join(known)})"
