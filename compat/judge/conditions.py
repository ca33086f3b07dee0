"""Evaluate a `when` clause against Facts: matched (with evidence), not matched, or unknown.

All conditions must hold. One that is false settles it (NO_MATCH) even when others are
unknown; otherwise any unknown fact makes the verdict UNKNOWN with the reasons collected, so
a check is never passed silently for lack of data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.matrix.when import When
from compat.model.conditions import Outcome, Verdict
from compat.model.unknown import Unknown

if TYPE_CHECKING:
    from compat.model.facts import Facts, Gpu, Launcher

# A check yields (True, evidence) when a condition holds, (False, why-not) when it does not,
# or an Unknown when it cannot be decided.
_Result = tuple[bool, str] | Unknown


def evaluate(when: When, facts: Facts) -> Verdict:
    evidence: list[str] = []
    missing: list[str] = []
    for result in _checks(when, facts):
        if isinstance(result, Unknown):
            missing.append(result.reason)
            continue
        held, text = result
        if not held:
            return Verdict(outcome=Outcome.NO_MATCH, failed=text)
        evidence.append(text)
    if missing:
        return Verdict(outcome=Outcome.UNKNOWN, evidence=tuple(evidence), missing=tuple(dict.fromkeys(missing)))
    return Verdict(outcome=Outcome.MATCH, evidence=tuple(evidence))


# PEP 508 marker variables (and the legacy dotted spellings packaging still accepts).
_MARKER_VARIABLES = re.compile(
    r"\b(implementation_name|implementation_version|os_name|platform_machine|platform_python_implementation"
    r"|platform_release|platform_system|platform_version|python_full_version|python_version|sys_platform"
    r"|os\.name|sys\.platform|platform\.version|platform\.machine|platform\.python_implementation)\b"
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_LEGACY = {"os.name": "os_name", "sys.platform": "sys_platform", "platform.version": "platform_version",
           "platform.machine": "platform_machine", "platform.python_implementation": "platform_python_implementation"}


def marker_variables(marker: Marker) -> frozenset[str]:
    """The environment keys a PEP 508 marker reads (`extra` aside)."""
    code = _QUOTED.sub("''", str(marker))  # a value may contain a variable's name ("linux" in 'sys_platform')
    return frozenset(_LEGACY.get(name, name) for name in _MARKER_VARIABLES.findall(code))


def marker_holds(marker: Marker, env: Mapping[str, str], *, extra: str = "") -> bool | Unknown:
    """`marker` evaluated against `env` alone: Unknown when it reads a key the facts lack.

    packaging fills every missing key from the interpreter running compat, which would judge a
    facts file from another machine partly with this host's platform.
    """
    missing = sorted(marker_variables(marker) - set(env))
    if missing:
        return Unknown(reason=f"marker {marker} needs {', '.join(missing)}, which the facts do not record")
    return marker.evaluate({**env, "extra": extra})


def in_spec(version: str, spec: SpecifierSet) -> bool:
    """`version` satisfies `spec`, pre-releases and local tags included ("2.5.1+cu124")."""
    try:
        return spec.contains(Version(version), prereleases=True)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return False


def _checks(w: When, f: Facts) -> Iterator[_Result]:
    # Cheap, decisive package checks come first so most clauses stop early.
    yield from _installed(w, f)
    yield from _hardware(w, f)
    yield from _launch_checks(w, f)
    if not w.script.is_empty():
        yield from _script(w, f)


def _installed(w: When, f: Facts) -> Iterator[_Result]:
    """The packages the clause asks for or against, and the interpreter's markers."""
    for name, spec in w.packages:
        yield _package(f, name, spec)
    for name in w.absent:
        dist = f.package(name)
        if isinstance(dist, Unknown):
            yield Unknown(reason=f"installed packages: {dist.reason}")
        else:
            yield (dist is None, f"{name} not installed" if dist is None else f"{name} {dist.version} installed")
    if w.python is not None:
        env = f.python.markers
        held = marker_holds(w.python, env)
        if isinstance(held, Unknown):
            yield Unknown(reason=f"python: {held.reason}")
        else:
            yield (held, f"python {env.get('python_full_version', f.python.version)} ({w.python})")


def _hardware(w: When, f: Facts) -> Iterator[_Result]:
    """The driver, the torch build and the GPUs."""
    if w.driver is not None:
        yield _version_fact("driver", f.hardware.driver, w.driver, absent="no NVIDIA driver")
    if w.driver_cuda is not None:
        yield _version_fact("driver CUDA", f.hardware.driver_cuda, w.driver_cuda, absent="no NVIDIA driver")
    if w.torch_cuda is not None or w.torch_cpu is not None:
        yield from _torch(w, f)
    if (
        w.gpu_count is not None
        or w.compute_capability is not None
        or w.gpu_name
        or w.nvlink is not None
    ):
        yield from _gpus(w, f)


def _launch_checks(w: When, f: Facts) -> Iterator[_Result]:
    """The launcher, accelerate's config, the environment variables, /dev/shm and the container."""
    if w.launcher:
        yield _launcher(f.launch.launcher, w.launcher)
    if w.distributed_type or w.fsdp_version or w.zero_stage:
        yield from _accelerate(w, f)
    for name, text in w.env:
        value = f.launch.env.get(name)
        if value is None:
            yield (False, f"{name} not set")
        else:
            yield (text in value, f"{name}={value}")
    for name in w.env_unset:
        value = f.launch.env.get(name)
        yield (value is None, f"{name} not set" if value is None else f"{name}={value}")
    if w.shm_mib is not None:
        shm = f.launch.shm_bytes
        if isinstance(shm, Unknown):
            yield Unknown(reason=f"/dev/shm size: {shm.reason}")
        else:
            mib = shm // (1024 * 1024)
            yield (w.shm_mib.contains(str(mib)), f"/dev/shm {mib} MiB ({w.shm_mib})")
    if w.container is not None:
        inside = f.launch.container is not None
        yield (inside == w.container, f"container: {f.launch.container or 'none'}")


def _package(f: Facts, name: str, spec: SpecifierSet) -> _Result:
    dist = f.package(name)
    if isinstance(dist, Unknown):
        return Unknown(reason=f"installed packages: {dist.reason}")
    if dist is None:
        return (False, f"{name} not installed")
    shown = f" ({spec})" if str(spec) else ""
    return (in_spec(dist.version, spec), f"{name} {dist.version}{shown}")


def _version_fact(label: str, value: str | None | Unknown, spec: SpecifierSet, *, absent: str) -> _Result:
    if isinstance(value, Unknown):
        return Unknown(reason=f"{label}: {value.reason}")
    if value is None:
        return (False, absent)
    return (in_spec(value, spec), f"{label} {value} ({spec})")


def _torch(w: When, f: Facts) -> Iterator[_Result]:
    torch = f.torch
    if isinstance(torch, Unknown):
        yield Unknown(reason=f"torch build: {torch.reason}")
        return
    if torch is None:
        yield (False, "torch not installed")
        return
    cuda = torch.cuda
    if isinstance(cuda, Unknown):
        yield Unknown(reason=f"torch CUDA version: {cuda.reason}")
        return
    if w.torch_cpu is not None:
        yield ((cuda is None) == w.torch_cpu, f"torch {torch.version} is {'a CPU-only' if cuda is None else 'a CUDA ' + cuda} build")
    if w.torch_cuda is not None:
        if cuda is None:
            yield (False, f"torch {torch.version} is a CPU-only build")
        else:
            yield (in_spec(cuda, w.torch_cuda), f"torch {torch.version} built for CUDA {cuda} ({w.torch_cuda})")


def _gpus(w: When, f: Facts) -> Iterator[_Result]:
    gpus = f.hardware.gpus
    if isinstance(gpus, Unknown):
        yield Unknown(reason=f"GPUs: {gpus.reason}")
        return
    if w.gpu_count is not None:
        count = f.visible_gpus()
        assert not isinstance(count, Unknown)  # gpus is known here
        yield (w.gpu_count.contains(str(count)), f"{count} visible GPU(s) ({w.gpu_count})")
    if w.compute_capability is not None:
        yield _any_gpu(gpus, "compute capability", lambda g: _cc_in(g, w.compute_capability))
    if w.gpu_name:
        needles = tuple(n.lower() for n in w.gpu_name)
        yield _any_gpu(gpus, "GPU name", lambda g: any(n in g.name.lower() for n in needles))
    if w.nvlink is not None:
        yield _nvlink(f, w.nvlink)


def _cc_in(gpu: Gpu, spec: SpecifierSet | None) -> bool | Unknown:
    cc = gpu.compute_capability
    if isinstance(cc, Unknown):
        return cc
    return spec is not None and in_spec(cc, spec)


def _any_gpu(gpus: tuple[Gpu, ...], label: str, test: Callable[[Gpu], bool | Unknown]) -> _Result:
    unknown: Unknown | None = None
    for gpu in gpus:
        held = test(gpu)
        if isinstance(held, Unknown):
            unknown = held
        elif held:
            cc = gpu.compute_capability
            label = f"GPU {gpu.index} {gpu.name}"
            return (True, label if isinstance(cc, Unknown) else f"{label} (sm_{cc.replace('.', '')})")
    if unknown is not None:
        return Unknown(reason=f"{label}: {unknown.reason}")
    return (False, f"no GPU matches the {label} condition")


def _nvlink(f: Facts, want: bool) -> _Result:
    links = f.hardware.links
    gpus = f.hardware.gpus
    if isinstance(links, Unknown):
        return Unknown(reason=f"GPU topology: {links.reason}")
    if isinstance(gpus, Unknown) or len(gpus) < 2:
        return (False, "fewer than two GPUs")
    kinds = [link.interconnect for link in links if link.a != link.b]
    if not kinds or any(isinstance(k, Unknown) for k in kinds):
        return Unknown(reason="GPU topology: link types not reported")
    all_nvlink = all(k.value == "nvlink" for k in kinds)  # type: ignore[union-attr]
    text = "all GPU pairs on NVLink" if all_nvlink else "GPUs connected over PCIe (no NVLink between some pair)"
    return (all_nvlink == want, text)


def _launcher(value: Launcher | Unknown, allowed: frozenset[Launcher]) -> _Result:
    if isinstance(value, Unknown):
        return Unknown(reason=f"launcher: {value.reason}")
    return (value in allowed, f"launcher {value}")


def _accelerate(w: When, f: Facts) -> Iterator[_Result]:
    cfg = f.launch.accelerate
    if isinstance(cfg, Unknown):
        yield Unknown(reason=f"accelerate config: {cfg.reason}")
        return
    if cfg is None:
        yield Unknown(reason="no accelerate config found (pass --accelerate-config)")
        return
    if w.distributed_type:
        dt = (cfg.distributed_type or "NO").upper()
        yield (dt in w.distributed_type, f"accelerate distributed_type {dt}")
    if w.fsdp_version:
        yield (cfg.fsdp_version in w.fsdp_version, f"FSDP version {cfg.fsdp_version}")
    if w.zero_stage:
        yield (cfg.zero_stage in w.zero_stage, f"ZeRO stage {cfg.zero_stage}")


def _script(w: When, f: Facts) -> Iterator[_Result]:
    s = f.script
    if s is None:
        yield Unknown(reason="no training script given (--script)")
        return
    if s.parse_error is not None:
        yield Unknown(reason=f"script {s.path}: {s.parse_error}")
        return
    sw = w.script
    if sw.trainers:
        used = sorted(set(s.trainers) & sw.trainers)
        yield (bool(used), f"script uses {', '.join(used)}" if used else "script uses none of " + ", ".join(sorted(sw.trainers)))
    if sw.device_map:
        maps = sorted(set(s.device_maps) & sw.device_map)
        yield (bool(maps), f"script passes device_map={maps[0]!r}" if maps else "script passes no matching device_map")
    for key in ("use_vllm", "config_access", "gradient_checkpointing", "use_cache", "use_liger_kernel"):
        want = getattr(sw, key)
        if want is None:
            continue
        have = getattr(s, key)
        if have is None:
            if key in ("use_vllm", "use_liger_kernel"):  # TRL's and transformers' default is False
                have = False
            else:
                yield Unknown(reason=f"script does not set {key}")
                continue
        yield (have == want, f"script {key}={have}")
    if sw.vllm_mode:
        if s.vllm_mode is None:
            yield Unknown(reason="script does not set vllm_mode (the default depends on the TRL version)")
        else:
            yield (s.vllm_mode in sw.vllm_mode, f"script vllm_mode={s.vllm_mode!r}")
