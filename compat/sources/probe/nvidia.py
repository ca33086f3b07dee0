"""NVIDIA driver, GPUs and topology: NVML first, then nvidia-smi, then /proc.

Each source is a fetch plus a pure parse. NVML is asked in a child process of compat's own
interpreter (no CUDA context): a driver library whose init blocks (a GPU fallen off the bus)
is killed at the timeout and one that crashes takes down only the child, and both become an
unknown with the reason. nvidia-smi is the fallback for hosts where NVML cannot be used;
/proc/driver/nvidia/version still gives the driver when both fail.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat.model import codec
from compat.model.facts import Gpu, Hardware, HardwareSource, Interconnect, Link
from compat.model.unknown import Unknown
from compat.sources.probe._run import Outcome, RunResult, marked_json, run

PROC_VERSION = Path("/proc/driver/nvidia/version")
QUERY_FIELDS = ("index", "name", "compute_cap", "memory.total", "pci.bus_id", "driver_version")

_TOPO_CLASSES = {
    "PIX": Interconnect.PCIE_SWITCH,
    "PXB": Interconnect.PCIE_SWITCH,
    "PHB": Interconnect.PCIE_HOST_BRIDGE,
    "NODE": Interconnect.PCIE_CROSS_SOCKET,
    "SYS": Interconnect.PCIE_CROSS_SOCKET,
    "SOC": Interconnect.PCIE_CROSS_SOCKET,  # the name of SYS before driver 384
}


# ---------------------------------------------------------------- pure parsers (nvidia-smi, /proc)


@dataclass(frozen=True, kw_only=True)
class SmiHeader:
    driver: str | None
    """"Driver Version" (or "KMD Version" from R610 on); None when absent."""
    cuda: str | None | Unknown
    """"CUDA Version" (or "CUDA UMD Version"); Unknown when it reads N/A."""


def parse_smi_header(text: str) -> SmiHeader:
    """The versions in the banner of plain `nvidia-smi`."""
    driver = re.search(r"(?:Driver|KMD) Version:\s*([0-9][0-9.]*)", text)
    cuda = re.search(r"CUDA (?:UMD )?Version:\s*(\S+)", text)
    cuda_value: str | None | Unknown = None
    if cuda:
        raw = cuda.group(1)
        cuda_value = raw if re.fullmatch(r"\d+\.\d+", raw) else Unknown(reason=f"nvidia-smi reports CUDA Version: {raw}")
    return SmiHeader(driver=driver.group(1) if driver else None, cuda=cuda_value)


def parse_query_gpu(text: str) -> tuple[tuple[Gpu, ...], str | None]:
    """GPUs and driver version from `nvidia-smi --query-gpu=... --format=csv,nounits`.

    Columns are found by their header, so the compute_cap column may be absent (drivers
    before R510 cannot report it) and other field sets still parse.
    """
    rows = [row for row in csv.reader(io.StringIO(text.strip()), skipinitialspace=True) if row]
    if len(rows) < 1:
        raise ValueError("empty output")
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in rows[0]]
    if "name" not in header or "index" not in header:
        raise ValueError(f"unexpected header {rows[0]!r}")
    gpus = []
    drivers = set()
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(f"line {n} has {len(row)} fields, expected {len(header)}")
        cell = dict(zip(header, (c.strip() for c in row), strict=True))
        try:
            index = int(cell["index"])
        except ValueError:
            raise ValueError(f"line {n}: index {cell['index']!r} is not a number") from None
        if cell.get("driver_version") and not _na(cell["driver_version"]):
            drivers.add(cell["driver_version"])
        gpus.append(
            Gpu(
                index=index,
                name=cell["name"],
                compute_capability=_cc(cell.get("compute_cap")),
                memory_mib=_mib(cell.get("memory.total")),
                bus_id=(
                    cell["pci.bus_id"]
                    if cell.get("pci.bus_id") and not _na(cell["pci.bus_id"])
                    else Unknown(reason="nvidia-smi did not report the bus id")
                ),
            )
        )
    return tuple(sorted(gpus, key=lambda g: g.index)), (sorted(drivers)[0] if drivers else None)


def parse_topo(text: str) -> tuple[Link, ...]:
    """Pairwise GPU links from `nvidia-smi topo -m` (NIC rows and affinity columns ignored)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header_at = next((i for i, line in enumerate(lines) if re.match(r"\s+GPU0\b", line)), None)
    if header_at is None:
        raise ValueError("no GPU0 column header")
    columns = []
    for token in lines[header_at].split():
        if not re.fullmatch(r"GPU\d+", token):
            break
        columns.append(int(token[3:]))
    cells: dict[tuple[int, int], str] = {}
    for line in lines[header_at + 1:]:
        tokens = line.split()
        m = re.fullmatch(r"GPU(\d+)", tokens[0])
        if not m:
            if tokens[0] == "Legend:":
                break
            continue
        if len(tokens) < len(columns) + 1:
            raise ValueError(f"row {tokens[0]} has too few columns")
        for col, value in zip(columns, tokens[1:], strict=False):
            cells[(int(m.group(1)), col)] = value
    links = []
    for a in columns:
        for b in columns:
            if a >= b:
                continue
            cell = cells.get((a, b)) or cells.get((b, a))
            if cell is None:
                raise ValueError(f"no entry for GPU{a}/GPU{b}")
            links.append(_topo_link(a, b, cell))
    return tuple(links)


def _topo_link(a: int, b: int, value: str) -> Link:
    not_reported = Unknown(reason="nvidia-smi topo -m does not report P2P support")
    nv = re.fullmatch(r"NV(\d+)", value)
    if nv:
        return Link(a=a, b=b, interconnect=Interconnect.NVLINK, nvlinks=int(nv.group(1)), p2p=not_reported)
    kind = _TOPO_CLASSES.get(value)
    interconnect = kind if kind is not None else Unknown(reason=f"nvidia-smi topo -m reports {value!r}")
    return Link(a=a, b=b, interconnect=interconnect, p2p=not_reported)


def parse_proc_version(text: str) -> str | None:
    """The driver version in /proc/driver/nvidia/version (proprietary or open kernel module)."""
    m = re.search(r"NVRM version:.*?Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)", text)
    return m.group(1) if m else None


def _na(value: str) -> bool:
    return value.startswith("[") or value in {"N/A", ""}


def _cc(value: str | None) -> str | Unknown:
    if value is None:
        return Unknown(reason="this nvidia-smi cannot report compute capability (driver before R510)")
    if re.fullmatch(r"\d+\.\d+", value):
        return value
    return Unknown(reason=f"nvidia-smi reports compute_cap {value!r}")


def _mib(value: str | None) -> int | Unknown:
    if value is not None:
        m = re.fullmatch(r"(\d+)(?:\s*MiB)?", value)
        if m:
            return int(m.group(1))
    return Unknown(reason=f"nvidia-smi reports memory.total {value!r}")


# ---------------------------------------------------------------- NVML


class NvmlUnavailable(Exception):
    """NVML could not be initialized (no library, no driver loaded)."""


def nvml_errors(nvml: Any) -> tuple[type[BaseException], ...]:
    """What a call into `nvml` can raise on a host quirk: the library's own NVMLError (a missing
    library and a missing symbol are NVMLError subclasses), OSError from loading it, and
    ValueError, TypeError, AttributeError and LookupError for odd values and a library older than
    the call (a function or a struct field it lacks). Anything else is a bug in compat."""
    return (nvml.NVMLError, OSError, ValueError, TypeError, AttributeError, LookupError)


def from_nvml(nvml: Any) -> Hardware:
    """Hardware facts through an NVML module (`pynvml`, or a fake with the same functions)."""
    errors = nvml_errors(nvml)
    try:
        nvml.nvmlInit()
    except errors as exc:
        raise NvmlUnavailable(_nvml_text(exc)) from exc
    try:
        return _read_nvml(nvml)
    finally:
        try:
            nvml.nvmlShutdown()
        except errors:
            pass


def _read_nvml(nvml: Any) -> Hardware:
    errors = nvml_errors(nvml)

    def ask(what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except errors as exc:
            return Unknown(reason=f"NVML {what}: {_nvml_text(exc)}")

    driver = ask("driver version", lambda: _str(nvml.nvmlSystemGetDriverVersion()))
    driver_cuda = ask("CUDA driver version", lambda: _cuda_text(nvml.nvmlSystemGetCudaDriverVersion_v2()))
    count = ask("device count", lambda: _count(nvml.nvmlDeviceGetCount()))
    if isinstance(count, Unknown):
        return Hardware(source=HardwareSource.NVML, driver=driver, driver_cuda=driver_cuda, gpus=count, links=count)
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]

    def gpu(i: int, h: Any) -> Gpu:
        name = ask("name", lambda: _str(nvml.nvmlDeviceGetName(h)))
        cc = ask("compute capability", lambda: "{}.{}".format(*nvml.nvmlDeviceGetCudaComputeCapability(h)))
        mem = ask("memory", lambda: int(nvml.nvmlDeviceGetMemoryInfo(h).total) // 2**20)
        bus = ask("PCI info", lambda: _str(nvml.nvmlDeviceGetPciInfo(h).busId))
        return Gpu(index=i, name=name if isinstance(name, str) else "unknown", compute_capability=cc, memory_mib=mem, bus_id=bus)

    gpus = [gpu(i, h) for i, h in enumerate(handles)]
    links = _nvml_links(nvml, handles, [g.bus_id for g in gpus])
    return Hardware(source=HardwareSource.NVML, driver=driver, driver_cuda=driver_cuda, gpus=tuple(gpus), links=links)


_NVML_LEVELS = {
    "NVML_TOPOLOGY_INTERNAL": Interconnect.SAME,
    "NVML_TOPOLOGY_SINGLE": Interconnect.PCIE_SWITCH,
    "NVML_TOPOLOGY_MULTIPLE": Interconnect.PCIE_SWITCH,
    "NVML_TOPOLOGY_HOSTBRIDGE": Interconnect.PCIE_HOST_BRIDGE,
    "NVML_TOPOLOGY_NODE": Interconnect.PCIE_CROSS_SOCKET,
    "NVML_TOPOLOGY_SYSTEM": Interconnect.PCIE_CROSS_SOCKET,
}


def _nvml_links(nvml: Any, handles: list, buses: list) -> tuple[Link, ...]:
    levels = {getattr(nvml, name): kind for name, kind in _NVML_LEVELS.items() if hasattr(nvml, name)}
    errors = nvml_errors(nvml)
    direct, to_switch = _nvlink_census(nvml, handles, buses)
    links = []
    for a in range(len(handles)):
        for b in range(a + 1, len(handles)):
            # On NVSwitch systems (HGX) every link ends at a switch; nvidia-smi counts the
            # links both GPUs have into the fabric, and so does this.
            lanes = direct.get((a, b), 0) + min(to_switch.get(a, 0), to_switch.get(b, 0))
            if lanes:
                interconnect: Interconnect | Unknown = Interconnect.NVLINK
            else:
                try:
                    level = nvml.nvmlDeviceGetTopologyCommonAncestor(handles[a], handles[b])
                    interconnect = levels.get(level, Unknown(reason=f"NVML topology level {level}"))
                except errors as exc:
                    interconnect = Unknown(reason=f"NVML topology: {_nvml_text(exc)}")
            try:
                status = nvml.nvmlDeviceGetP2PStatus(handles[a], handles[b], nvml.NVML_P2P_CAPS_INDEX_READ)
                p2p: bool | Unknown = status == nvml.NVML_P2P_STATUS_OK
            except errors as exc:
                p2p = Unknown(reason=f"NVML P2P status: {_nvml_text(exc)}")
            links.append(Link(a=a, b=b, interconnect=interconnect, nvlinks=lanes, p2p=p2p))
    return tuple(links)


def _nvlink_census(nvml: Any, handles: list, buses: list) -> tuple[dict[tuple[int, int], int], dict[int, int]]:
    index_of = {_bus_key(bus): i for i, bus in enumerate(buses) if isinstance(bus, str)}
    switch_type = getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_SWITCH", 2)
    errors = nvml_errors(nvml)
    direct: dict[tuple[int, int], int] = {}
    to_switch: dict[int, int] = {}
    for i, h in enumerate(handles):
        for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
            try:
                if nvml.nvmlDeviceGetNvLinkState(h, link) != nvml.NVML_FEATURE_ENABLED:
                    continue
            except errors:
                break  # no NVLink on this GPU, or no more links
            try:
                kind = nvml.nvmlDeviceGetNvLinkRemoteDeviceType(h, link)
            except errors:
                kind = None
            if kind == switch_type:
                to_switch[i] = to_switch.get(i, 0) + 1
                continue
            try:
                peer = index_of.get(_bus_key(_str(nvml.nvmlDeviceGetNvLinkRemotePciInfo(h, link).busId)))
            except errors:
                continue
            if peer is not None and peer > i:
                direct[(i, peer)] = direct.get((i, peer), 0) + 1
    return direct, to_switch


def _cuda_text(raw: object) -> str:
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 < raw < 1_000_000:
        raise ValueError(f"odd value {str(raw)[:40]!r}")
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _count(raw: object) -> int:
    # A lying library must not make compat ask for a billion handles.
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 1024:
        raise ValueError(f"odd value {str(raw)[:40]!r}")
    return raw


def _bus_key(bus: str) -> str:
    # NVML pads the domain to 8 digits, some tools to 4: compare the bus:device.function only.
    return bus.lower().split(":", 1)[-1] if bus.count(":") == 2 else bus.lower()


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


# ---------------------------------------------------------------- NVML in a child process

NVML_MARK = "COMPAT-NVML:"

# The child imports compat from the same place as this process (not from the working
# directory, which `-c` would put first on sys.path) and pynvml as installed.
_NVML_CHILD = """
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
sys.path.insert(0, {root!r})
from compat.sources.probe.nvidia import nvml_child_main
nvml_child_main()
"""


NVML_LIBRARY_NOT_FOUND = "NVML: NVML Shared Library Not Found"
"""The NVML child's reason when pynvml cannot load the driver library (pynvml's text for NVML_ERROR_LIBRARY_NOT_FOUND)."""

NVML_LIBRARY = "libnvidia-ml.so.1"
"""The name pynvml asks the dynamic loader for on Linux."""


def nvml_library_absent(
    *, cache: Path = Path("/etc/ld.so.cache"), search: tuple[str, ...] | None = None, environ: dict[str, str] | None = None,
) -> bool:
    """Whether the dynamic loader certainly cannot find NVML's library here, so the NVML child would only report
    NVML_LIBRARY_NOT_FOUND: no file of that name where the loader looks (LD_LIBRARY_PATH, the interpreter's own
    lib directories, the default directories and their per-architecture subdirectories) and no mention of it in
    the loader's cache. Any doubt (another system, an unreadable cache, a PYTHONPATH that may hold another pynvml)
    is False: the child is asked."""
    import glob
    import os

    if not sys.platform.startswith("linux"):
        return False
    env = os.environ if environ is None else environ
    if env.get("PYTHONPATH"):
        return False
    try:
        if NVML_LIBRARY.encode() in cache.read_bytes():
            return False
    except OSError:
        return False
    if search is None:
        search = (
            *[d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d],
            os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib"),
            "/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/*", "/usr/lib/*", "/usr/local/lib", "/usr/local/nvidia/lib*",
        )
    return not any(glob.glob(os.path.join(glob.escape(d) if "*" not in d else d, NVML_LIBRARY)) for d in search)


def fetch_nvml(*, timeout: float, python: str | None = None) -> tuple[Hardware | None, str]:
    """Hardware facts from NVML, asked in a child process; (None, why) when NVML gave none.

    A blocking init is killed at `timeout`, a crash (SIGSEGV in the driver library) ends only
    the child, and a report that does not decode into Hardware is refused: each is a reason.
    """
    if python is None and nvml_library_absent():
        return None, NVML_LIBRARY_NOT_FOUND  # the child's answer on such a host, without starting it
    root = str(Path(__file__).resolve().parents[3])
    result = run([python or sys.executable, "-c", _NVML_CHILD.format(root=root)], timeout=timeout)
    return parse_nvml_report(result)


def parse_nvml_report(result: RunResult) -> tuple[Hardware | None, str]:
    """The NVML child's report (pure): Hardware, or None with the reason NVML gave none."""
    data = marked_json(result, NVML_MARK)
    if data is None:
        problem = result.problem
        return None, f"NVML: the probe process {_after_name(problem) if problem else 'printed no report'}"
    if isinstance(data.get("unavailable"), str):
        return None, data["unavailable"]
    try:
        return codec.decode(Hardware, data.get("hardware")), ""
    except (codec.DecodeError, TypeError, ValueError) as exc:
        return None, f"NVML reported values compat cannot read ({str(exc)[:200]})"


def _after_name(problem: str) -> str:
    # "python3.11 was killed by SIGSEGV" -> "was killed by SIGSEGV": the interpreter's name says nothing here.
    first, _, rest = problem.partition(" ")
    return rest if rest and "/" not in first and first.startswith("python") else problem


def nvml_child_main() -> None:
    """The NVML child: print Hardware (or why there is none) behind NVML_MARK, as JSON."""
    try:
        import pynvml
    except ImportError:
        report: dict = {"unavailable": "nvidia-ml-py is not installed"}
    else:
        try:
            report = {"hardware": codec.encode(from_nvml(pynvml))}
        except NvmlUnavailable as exc:
            report = {"unavailable": f"NVML: {exc}"}
        except nvml_errors(pynvml) as exc:  # odd values from a driver library: a reason, not a traceback
            report = {"unavailable": f"NVML: unexpected {type(exc).__name__}: {str(exc)[:200]}"}
    sys.stdout.write(NVML_MARK + json.dumps(report, default=str) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------- fetch


def probe_hardware(
    *,
    timeout: float = 10.0,
    nvml: Any = None,
    smi: str = "nvidia-smi",
    proc_version: Path = PROC_VERSION,
) -> Hardware:
    """NVML, then nvidia-smi, then /proc; never raises on a host quirk.

    `nvml` is an NVML module to use in this process (tests pass a fake); by default `pynvml` is
    used in a child process with the timeout (`fetch_nvml`).
    """
    reasons = []
    if nvml is not None:
        try:
            return from_nvml(nvml)
        except NvmlUnavailable as exc:
            reasons.append(f"NVML: {exc}")
    else:
        nvml_hw, why = fetch_nvml(timeout=timeout)
        if nvml_hw is not None:
            return nvml_hw
        reasons.append(why)
    smi_hw, smi_problem, smi_absent = _from_smi(smi, timeout)
    if smi_hw is not None:
        return smi_hw
    reasons.append(smi_problem)
    driver = _read_proc(proc_version)
    why = "; ".join(r for r in reasons if r)
    if driver is not None:
        return Hardware(
            source=HardwareSource.PROC,
            driver=driver,
            driver_cuda=Unknown(reason=why),
            gpus=Unknown(reason=why),
            links=Unknown(reason=why),
        )
    # No NVIDIA stack at all only when every source says it is absent: an NVML that hung or
    # crashed means there is a driver library, and the GPUs are unknown, not absent.
    if smi_absent and not proc_version.exists() and all(map(_absent, reasons[:-1])):
        return Hardware(source=HardwareSource.NONE, driver=None, driver_cuda=None, gpus=(), links=())
    return Hardware(
        source=HardwareSource.NONE,
        driver=Unknown(reason=why),
        driver_cuda=Unknown(reason=why),
        gpus=Unknown(reason=why),
        links=Unknown(reason=why),
    )


def _absent(nvml_reason: str) -> bool:
    return any(word in nvml_reason for word in ("Not Found", "not installed", "Driver Not Loaded", "not found"))


def _from_smi(smi: str, timeout: float) -> tuple[Hardware | None, str, bool]:
    """The hardware nvidia-smi reports, else (None, why, whether there is no nvidia-smi at all)."""
    query = run([smi, f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,nounits"], timeout=timeout)
    if not query.ok and "compute_cap" in (query.stdout + query.stderr) and "not a valid field" in (query.stdout + query.stderr):
        fields = [f for f in QUERY_FIELDS if f != "compute_cap"]
        query = run([smi, f"--query-gpu={','.join(fields)}", "--format=csv,nounits"], timeout=timeout)
    if not query.ok:
        return None, query.problem or "nvidia-smi failed", query.outcome is Outcome.NOT_FOUND
    try:
        gpus, driver = parse_query_gpu(query.stdout)
    except ValueError as exc:
        return None, f"nvidia-smi --query-gpu printed something compat cannot read ({exc})", False
    header = run([smi], timeout=timeout)
    driver_cuda: str | None | Unknown
    if header.ok:
        parsed = parse_smi_header(header.stdout)
        driver = driver or parsed.driver
        driver_cuda = parsed.cuda if parsed.cuda is not None else Unknown(reason="nvidia-smi shows no CUDA Version")
    else:
        driver_cuda = Unknown(reason=header.problem or "nvidia-smi failed")
    links: tuple[Link, ...] | Unknown = ()
    if len(gpus) > 1:
        topo = run([smi, "topo", "-m"], timeout=timeout)
        if topo.ok:
            try:
                links = parse_topo(topo.stdout)
            except ValueError as exc:
                links = Unknown(reason=f"nvidia-smi topo -m printed something compat cannot read ({exc})")
        else:
            links = Unknown(reason=topo.problem or "nvidia-smi topo -m failed")
    return (
        Hardware(
            source=HardwareSource.NVIDIA_SMI,
            driver=driver if driver else Unknown(reason="nvidia-smi did not report the driver version"),
            driver_cuda=driver_cuda,
            gpus=gpus,
            links=links,
        ),
        "",
        False,
    )


def _read_proc(path: Path) -> str | None:
    try:
        return parse_proc_version(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
