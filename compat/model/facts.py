"""Facts: everything the checks need about one environment, gathered once.

Facts are plain frozen values. `compat/probe` builds them from the host; everything else
reads them. They round-trip through JSON (`dump_facts` / `load_facts`) so a snapshot taken
on one machine can be diagnosed on another.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field

from compat.errors import FactsError
from compat.model import codec
from compat.model.launcher import Launcher as Launcher  # re-exported: defined there (see why)
from compat.model.launcher import canonical as canonical
from compat.model.unknown import Unknown

SCHEMA_VERSION = 1


class Interconnect(str, enum.Enum):
    """How two GPUs reach each other (the `nvidia-smi topo -m` classes, coarsened)."""

    NVLINK = "nvlink"
    PCIE_SWITCH = "pcie-switch"  # PIX / PXB: through PCIe switches only
    PCIE_HOST_BRIDGE = "pcie-host-bridge"  # PHB: through the CPU's host bridge
    PCIE_CROSS_SOCKET = "pcie-cross-socket"  # NODE / SYS: across NUMA nodes or sockets
    SAME = "same"  # a GPU with itself (X)


class TorchSource(str, enum.Enum):
    """Where the torch build facts came from."""

    IMPORT = "import"  # torch was imported in a child interpreter
    FILES = "files"  # read from torch's files (version.py, cmake config, libraries, their ELF load check) or a child's load
    METADATA = "metadata"  # torch could not be imported; read from dist-info and the matrix
    DECLARED = "declared"


class Chosen(str, enum.Enum):
    """Why this interpreter is the one judged, when nothing else was named (`compat doctor` alone)."""

    OPTION = "option"  # --python named it (an interpreter or an environment directory)
    VIRTUAL_ENV = "virtual-env"  # the activated virtual environment ($VIRTUAL_ENV)
    CONDA = "conda"  # the activated conda environment ($CONDA_PREFIX)
    PATH = "path"  # compat runs from its own isolated install (pipx, uv tool, /opt/compat): the python on PATH
    OWN = "own"  # the interpreter running compat

    def __str__(self) -> str:
        return self.value


class HardwareSource(str, enum.Enum):
    NVML = "nvml"
    NVIDIA_SMI = "nvidia-smi"
    PROC = "proc"  # /proc/driver/nvidia: driver version only
    DECLARED = "declared"
    NONE = "none"  # nothing found: no driver, no tools


@dataclass(frozen=True, kw_only=True)
class Python:
    version: str
    """Full interpreter version, e.g. "3.11.7"."""
    implementation: str
    """`sys.implementation.name`, e.g. "cpython"."""
    executable: str | Unknown
    """Path of the interpreter that was inspected."""
    markers: dict[str, str]
    """The PEP 508 marker environment of that interpreter (python_version, sys_platform, ...)."""
    glibc: str | None | Unknown
    """glibc version ("2.36"); None on a platform without glibc (macOS, musl)."""
    chosen: Chosen | None = None
    """Why this interpreter was inspected; None in snapshots that predate the record."""


@dataclass(frozen=True, kw_only=True)
class Distribution:
    name: str
    """Canonical (PEP 503 normalized) project name."""
    version: str
    """Installed version, including any local tag ("2.5.1+cu124")."""
    requires: tuple[str, ...]
    """The Requires-Dist lines of its metadata, verbatim (markers and extras included)."""
    installer: str | None = None
    """Contents of the INSTALLER file (pip, uv, conda); None when the file is absent."""

    @property
    def public_version(self) -> str:
        """The version without its local tag ("2.5.1"), as indexes and the API timeline name releases."""
        return self.version.split("+", 1)[0]


@dataclass(frozen=True, kw_only=True)
class TorchBuild:
    version: str
    """torch.__version__, e.g. "2.5.1+cu124"."""
    cuda: str | None | Unknown
    """CUDA version torch was built with ("12.4"); None for a CPU-only build."""
    cudnn: str | None | Unknown
    """cuDNN version as torch reports it ("90100"); None when torch has no cuDNN."""
    nccl: str | None | Unknown
    """NCCL version torch was built with ("2.21.5"); None when torch has no NCCL."""
    arch_list: tuple[str, ...] | Unknown
    """Compiled architectures from torch.cuda.get_arch_list() ("sm_90", "compute_90")."""
    cxx11_abi: bool | Unknown
    """torch._C._GLIBCXX_USE_CXX11_ABI: compiled extensions must match it."""
    source: TorchSource
    """How these facts were obtained."""
    import_error: str | None | Unknown = None
    """The error torch raised (or the signal that killed it) when it was imported, if any; Unknown
    when the import did not finish within its bound (a slow machine is not a broken build)."""
    debug: bool | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """torch.version.debug: a debug build."""
    hip: str | None | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """ROCm (HIP) version of a ROCm build; None for CUDA and CPU builds."""
    xnnpack: bool | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """torch.backends.xnnpack.enabled."""


@dataclass(frozen=True, kw_only=True)
class Tool:
    name: str
    """Executable name: gcc, clang, cmake, nvcc."""
    version: str | None | Unknown
    """Version it prints; None when it is not on PATH."""


@dataclass(frozen=True, kw_only=True)
class System:
    os: str | Unknown
    """Distribution name from /etc/os-release ("Debian GNU/Linux 12 (bookworm)")."""
    platform: str | Unknown
    """platform.platform() of the inspected interpreter ("Linux-6.8.0-x86_64-with-glibc2.35")."""
    cpu: str | Unknown
    """CPU model and logical CPU count ("AMD EPYC 9654 96-Core Processor, 192 CPUs")."""
    tools: tuple[Tool, ...]
    """Compilers and build tools that extensions (flash-attn, DeepSpeed ops) are built with."""
    cuda_toolkit: str | None | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """CUDA toolkit at $CUDA_HOME, else /usr/local/cuda (its version.json, "12.4.1"); None when there is none."""


@dataclass(frozen=True, kw_only=True)
class Gpu:
    index: int
    """Index as the driver numbers it (before CUDA_VISIBLE_DEVICES)."""
    name: str
    """Marketing name as the driver reports it ("NVIDIA H100 80GB HBM3")."""
    compute_capability: str | Unknown
    """"9.0" for Hopper, "12.0" for consumer Blackwell."""
    memory_mib: int | Unknown
    """Total memory in MiB."""
    bus_id: str | Unknown
    """PCI bus id ("00000000:18:00.0")."""


@dataclass(frozen=True, kw_only=True)
class Link:
    a: int
    """Index of the first GPU."""
    b: int
    """Index of the second GPU (a < b)."""
    interconnect: Interconnect | Unknown
    """The path between them."""
    nvlinks: int = 0
    """Number of NVLink lanes between them (NV4 → 4); 0 when not NVLink."""
    p2p: bool | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """Whether the driver reports peer-to-peer access as supported."""


@dataclass(frozen=True, kw_only=True)
class Hardware:
    source: HardwareSource
    """Where these facts came from; DECLARED when given on the command line."""
    driver: str | None | Unknown
    """NVIDIA driver version ("550.54.15"); None when there is no NVIDIA driver."""
    driver_cuda: str | None | Unknown
    """Highest CUDA version the driver supports ("12.4")."""
    gpus: tuple[Gpu, ...] | Unknown
    """Every GPU the driver sees; empty on a machine without NVIDIA GPUs."""
    links: tuple[Link, ...] | Unknown
    """Pairwise topology of the GPUs."""


@dataclass(frozen=True, kw_only=True)
class AccelerateConfig:
    path: str
    """File the config was read from."""
    distributed_type: str | None
    """NO, MULTI_GPU, FSDP, DEEPSPEED, ... as written in the file."""
    num_processes: int | None
    """Processes `accelerate launch` starts."""
    mixed_precision: str | None
    """no, fp16, bf16, fp8."""
    fsdp_version: int | None
    """1 or 2 when distributed_type is FSDP."""
    zero_stage: int | None
    """DeepSpeed ZeRO stage when distributed_type is DEEPSPEED."""


@dataclass(frozen=True, kw_only=True)
class Launch:
    launcher: Launcher | Unknown
    """How training is (or will be) started."""
    accelerate: AccelerateConfig | None | Unknown
    """The accelerate config in effect; None when there is none."""
    env: dict[str, str]
    """Launcher, NCCL_*, CUDA_* and PYTORCH_* variables; secret-looking names are never kept."""
    shm_bytes: int | Unknown
    """Size of /dev/shm (NCCL needs room there)."""
    container: str | None
    """docker, podman, kubernetes, ... when running inside one; None on bare metal."""


@dataclass(frozen=True, kw_only=True)
class Script:
    path: str
    """The training script that was read (never run)."""
    trainers: tuple[str, ...]
    """Trainer and config classes it uses (GRPOTrainer, SFTConfig, ...), sorted."""
    device_maps: tuple[str, ...]
    """Literal `device_map=` values passed anywhere ("auto", "cuda", "<dynamic>")."""
    use_vllm: bool | None
    """Literal use_vllm= value; None when the script does not set it."""
    vllm_mode: str | None
    """Literal vllm_mode= value ("server", "colocate"); None when not set."""
    config_access: bool
    """The script reads `.config` off a model that a Trainer may have wrapped."""
    gradient_checkpointing: bool | None
    """Literal gradient_checkpointing= value; None when not set."""
    use_cache: bool | None
    """Literal use_cache= value; None when not set."""
    parse_error: str | None = None
    """Why the script could not be parsed, if it could not."""
    use_liger_kernel: bool | None = None
    """True when the script turns Liger's model patches on (use_liger_kernel=True, an apply_liger_kernel_to_*
    call, AutoLigerKernelForCausalLM, an import of liger_kernel.transformers); the literal False it passes; None when
    it does neither."""


@dataclass(frozen=True, kw_only=True)
class Facts:
    schema_version: int
    """Version of this JSON layout; bumped on incompatible change."""
    python: Python
    """The interpreter that was inspected."""
    packages: tuple[Distribution, ...] | Unknown
    """Installed distributions, sorted by name."""
    torch: TorchBuild | None | Unknown
    """The torch build; None when torch is not installed."""
    hardware: Hardware
    """NVIDIA driver, GPUs and topology."""
    launch: Launch
    """How training is started and what the launcher will see."""
    script: Script | None = None
    """Facts read from a training script (`--script`)."""
    declared: tuple[str, ...] = ()
    """Names of facts given on the command line rather than probed ("gpus", "driver")."""
    system: System | Unknown = field(default_factory=lambda: Unknown(reason="not probed"))
    """Operating system, CPU and build tools."""
    requested: tuple[str, ...] = ()
    """Extras asked for by name, as `name[extra,...]` (a requirements file's or a lock's lines), sorted; empty
    where nothing records them (pip and uv keep no record of the extras an install asked for)."""

    def visible_gpus(self) -> int | Unknown:
        """GPUs a training process will see: CUDA_VISIBLE_DEVICES narrows probed ones, not declared ones."""
        gpus = self.hardware.gpus
        if isinstance(gpus, Unknown):
            return gpus
        visible = self.launch.env.get("CUDA_VISIBLE_DEVICES")
        if visible is None or "gpus" in self.declared:
            return len(gpus)
        return min(len([e for e in visible.split(",") if e.strip()]), len(gpus))

    def package(self, name: str) -> Distribution | None | Unknown:
        """The installed distribution called `name`, None if absent, Unknown if unknowable."""
        if isinstance(self.packages, Unknown):
            return self.packages
        key = canonical(name)
        for dist in self.packages:
            if dist.name == key:
                return dist
        return None


def dump_facts(facts: Facts) -> str:
    """Facts as deterministic JSON (sorted keys, trailing newline)."""
    return json.dumps(codec.encode(facts), indent=2, sort_keys=True) + "\n"


def load_facts(text: str, *, origin: str = "facts") -> Facts:
    """Parse a facts JSON document; raises FactsError naming `origin` and what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FactsError(f"{origin}: not JSON: {exc}") from exc
    except RecursionError:
        raise FactsError(f"{origin}: not a facts file: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise FactsError(f"{origin}: expected a JSON object at the top level")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise FactsError(f"{origin}: schema_version {version!r} is not supported (expected {SCHEMA_VERSION})")
    try:
        return codec.decode(Facts, data)
    except codec.DecodeError as exc:
        raise FactsError(f"{origin}: {exc}") from exc
