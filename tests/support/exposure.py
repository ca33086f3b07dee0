"""Facts that meet a catalog entry's `when` clause, and facts that miss it by one condition.

`exposed(when)` holds, for every condition, a value inside it (a version at the boundary where the
condition has one: `<2.4` gets 2.3, `>=2.4` gets 2.4). `cleared(when)` yields, one condition at a
time, the same facts with that condition moved outside (the version just past the boundary, the
package uninstalled, the flag flipped). Written against `When`'s fields, not against entries, so an
entry added later is built the same way; a field this module does not know fails loudly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat.judge.conditions import in_spec, marker_holds
from compat.matrix.when import ScriptWhen, When
from compat.model.facts import AccelerateConfig, Facts, Hardware, HardwareSource, Interconnect, Launcher, Link, Script
from tests.support.facts import GPU_NAMES, LINUX, distributions, gpus, interpreter, launch_by, torch_build
from tests.support.facts import facts as build_facts

_CCS = ("3.7", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")
_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
_COUNTS = ("1", "2", "4", "8", "0")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Box:
    """The parts of Facts a `when` clause reads, as plain values."""

    packages: tuple[tuple[str, str], ...] = ()
    """Installed name → version."""
    python: str = "3.11"
    gpu_count: int = 1
    cc: str = "9.0"
    gpu_name: str | None = None
    nvlink: bool | None = None
    driver: str = "580.95.05"
    driver_cuda: str = "13.0"
    torch_cuda: str | None = "12.4"
    """None: a CPU-only torch build."""
    torch: bool = False
    """Whether torch's build is part of the facts (only when a condition reads it)."""
    launcher: Launcher = Launcher.TORCHRUN
    accelerate: tuple[str | None, int | None, int | None] | None = None
    """(distributed_type, fsdp_version, zero_stage) of accelerate's config; None: no config."""
    env: tuple[tuple[str, str], ...] = ()
    shm_mib: int | None = None
    container: bool = False
    script: tuple[tuple[str, Any], ...] | None = None
    """Script fields that differ from a plain script; None: no script."""

    def with_package(self, name: str, version: str | None) -> _Box:
        kept = tuple((n, v) for n, v in self.packages if n != name)
        return dataclasses.replace(self, packages=kept if version is None else (*kept, (name, version)))

    def with_env(self, name: str, value: str | None) -> _Box:
        kept = tuple((n, v) for n, v in self.env if n != name)
        return dataclasses.replace(self, env=kept if value is None else (*kept, (name, value)))

    def with_script(self, **fields: Any) -> _Box:
        return dataclasses.replace(self, script=(*dict(self.script or ()).items(), *fields.items()))

    def with_accelerate(self, *, distributed_type: str | None = "", fsdp: int | None = -1, zero: int | None = -1) -> _Box:
        dt, fv, zs = self.accelerate or (None, None, None)
        return dataclasses.replace(self, accelerate=(dt if distributed_type == "" else distributed_type,
                                                     fv if fsdp == -1 else fsdp, zs if zero == -1 else zero))


def _candidates(spec: SpecifierSet) -> list[str]:
    """Versions at and beside each bound of `spec`: the value just inside or just outside it comes first."""
    out: list[str] = []
    for s in spec:
        version = Version(s.version.removesuffix(".*"))
        release = list(version.release)
        out.append(str(version))
        for i in reversed(range(len(release))):
            if release[i] > 0:
                out.append(".".join(map(str, [*release[:i], release[i] - 1, *release[i + 1:]])))
        out += [".".join(map(str, [*release[:i], release[i] + 1])) for i in reversed(range(len(release)))]
    return [*out, "0.1", "1.0", "99.0"]


def version_in(spec: SpecifierSet, candidates: Iterable[str] = ()) -> str | None:
    return next((v for v in (*candidates, *_candidates(spec)) if in_spec(v, spec)), None)


def version_out(spec: SpecifierSet, candidates: Iterable[str] = ()) -> str | None:
    return next((v for v in (*candidates, *_candidates(spec)) if not in_spec(v, spec)), None)


def _python_where(marker: Marker, holds: bool) -> str | None:
    return next((p for p in _PYTHONS if marker_holds(marker, _markers(p)) is holds), None)


def _markers(python: str) -> dict[str, str]:
    return {**LINUX, "python_version": python, "python_full_version": f"{python}.0",
            "implementation_version": f"{python}.0"}


_Step = Callable[[_Box], "_Box | None"]
"""One condition applied to the box; None where no value can be found."""


def _steps(w: When) -> Iterator[tuple[str, _Step, _Step]]:
    """(condition, put the box inside it, put the box outside it) for every condition `w` sets."""
    yield from _package_steps(w)
    yield from _hardware_steps(w)
    yield from _launch_steps(w)
    yield from _script_steps(w.script)


def _package_steps(w: When) -> Iterator[tuple[str, _Step, _Step]]:
    for name, spec in w.packages:
        # "" (any version): outside is not installed
        outside = partial(_install, name=name, version=version_out(spec)) if str(spec) else partial(_uninstall, name=name)
        yield (f"packages.{name}", partial(_install, name=name, version=version_in(spec)), outside)
    for name in w.absent:
        yield (f"absent.{name}", partial(_uninstall, name=name), partial(_install, name=name, version="1.0"))
    if w.python is not None:
        marker = w.python
        yield ("python", lambda b: _set(b, python=_python_where(marker, True)),
               lambda b: _set(b, python=_python_where(marker, False)))


def _hardware_steps(w: When) -> Iterator[tuple[str, _Step, _Step]]:
    for key, candidates in (("gpu_count", _COUNTS), ("compute_capability", _CCS)):
        spec = getattr(w, key)
        if spec is not None:
            field = "gpu_count" if key == "gpu_count" else "cc"
            inside, outside = version_in(spec, candidates), version_out(spec, candidates)
            yield (key, partial(_field, key=field, value=_count(field, inside)),
                   partial(_field, key=field, value=_count(field, outside)))
    if w.gpu_name:
        needle = w.gpu_name[0]
        yield ("gpu_name", lambda b: _set(b, gpu_name=f"NVIDIA GeForce {needle} test"),
               lambda b: _set(b, gpu_name="NVIDIA H100 80GB HBM3"))
    if w.nvlink is not None:
        want = w.nvlink
        yield ("nvlink", lambda b: _set(b, nvlink=want, gpu_count=max(b.gpu_count, 2)), lambda b: _set(b, nvlink=not want))
    for key in ("driver", "driver_cuda", "torch_cuda"):
        spec = getattr(w, key)
        if spec is not None:
            inside, outside = version_in(spec), version_out(spec)
            yield (key, partial(_version_fact, key=key, value=inside), partial(_version_fact, key=key, value=outside))
    if w.torch_cpu is not None:
        cpu = w.torch_cpu
        yield ("torch_cpu", lambda b: _set(b, torch=True, torch_cuda=None if cpu else "12.4"),
               lambda b: _set(b, torch=True, torch_cuda="12.4" if cpu else None))


def _launch_steps(w: When) -> Iterator[tuple[str, _Step, _Step]]:
    if w.launcher:
        inside = sorted(w.launcher)[0]
        outside = next((la for la in Launcher if la not in w.launcher), None)
        yield ("launcher", lambda b: _set(b, launcher=inside), lambda b: _set(b, launcher=outside))
    yield from _accelerate_steps(w)
    for name, text in w.env:
        yield (f"env.{name}", partial(_env, name=name, value=text or "1"), partial(_env, name=name, value=None))
    for name in w.env_unset:
        yield (f"env_unset.{name}", partial(_env, name=name, value=None), partial(_env, name=name, value="1"))
    if w.shm_mib is not None:
        spec = w.shm_mib
        yield ("shm_mib", lambda b: _set(b, shm_mib=_int(version_in(spec))), lambda b: _set(b, shm_mib=_int(version_out(spec))))
    if w.container is not None:
        inside_container = w.container
        yield ("container", lambda b: _set(b, container=inside_container), lambda b: _set(b, container=not inside_container))


def _accelerate_steps(w: When) -> Iterator[tuple[str, _Step, _Step]]:
    if w.distributed_type:
        dt = sorted(w.distributed_type)[0]
        other = "NO" if "NO" not in w.distributed_type else "MULTI_GPU"
        yield ("distributed_type", lambda b: b.with_accelerate(distributed_type=dt),
               lambda b: b.with_accelerate(distributed_type=other))
    if w.fsdp_version:
        fv = sorted(w.fsdp_version)[0]
        yield ("fsdp_version", lambda b: b.with_accelerate(fsdp=fv), lambda b: b.with_accelerate(fsdp=_other(w.fsdp_version)))
    if w.zero_stage:
        zs = sorted(w.zero_stage)[0]
        yield ("zero_stage", lambda b: b.with_accelerate(zero=zs), lambda b: b.with_accelerate(zero=_other(w.zero_stage)))


def _script_steps(sw: ScriptWhen) -> Iterator[tuple[str, _Step, _Step]]:
    if sw.is_empty():
        return
    # without a script the clause is undecided (doctor says it cannot check), not missed: no outside
    yield ("script", lambda b: b.with_script(), lambda b: None)
    if sw.trainers:
        name = sorted(sw.trainers)[0]
        other = "Trainer" if "Trainer" not in sw.trainers else "NotAKnownTrainer"  # a trainer outside the clause
        yield ("script.trainers", lambda b: b.with_script(trainers=(name,)), lambda b: b.with_script(trainers=(other,)))
    if sw.device_map:
        value = sorted(sw.device_map)[0]
        yield ("script.device_map", lambda b: b.with_script(device_maps=(value,)), lambda b: b.with_script(device_maps=()))
    if sw.vllm_mode:
        mode = sorted(sw.vllm_mode)[0]
        yield ("script.vllm_mode", lambda b: b.with_script(vllm_mode=mode), lambda b: b.with_script(vllm_mode="none"))
    for key in ("use_vllm", "config_access", "gradient_checkpointing", "use_cache", "use_liger_kernel"):
        want = getattr(sw, key)
        if want is not None:
            yield (f"script.{key}", partial(_script_field, key=key, value=want), partial(_script_field, key=key, value=not want))


def _install(box: _Box, *, name: str, version: str | None) -> _Box | None:
    return None if version is None else box.with_package(name, version)


def _uninstall(box: _Box, *, name: str) -> _Box:
    return box.with_package(name, None)


def _field(box: _Box, *, key: str, value: object) -> _Box | None:
    return _set(box, **{key: value})


def _version_fact(box: _Box, *, key: str, value: str | None) -> _Box | None:
    """The driver's, the driver's CUDA or torch's CUDA version (the last one puts a torch build in the facts)."""
    return _set(box, torch=box.torch or key == "torch_cuda", **{key: value})


def _env(box: _Box, *, name: str, value: str | None) -> _Box:
    return box.with_env(name, value)


def _script_field(box: _Box, *, key: str, value: object) -> _Box:
    return box.with_script(**{key: value})


def _set(box: _Box, **fields: Any) -> _Box | None:
    if any(v is None for k, v in fields.items() if k not in ("torch_cuda", "nvlink", "script", "gpu_name")):
        return None
    return dataclasses.replace(box, **fields)


def _count(field: str, value: str | None) -> str | int | None:
    return _int(value) if field == "gpu_count" else value


def _int(value: str | None) -> int | None:
    return None if value is None else int(Version(value).release[0])


def _other(values: frozenset[int]) -> int:
    return next(v for v in (1, 2, 3, 0) if v not in values)


_KNOWN = frozenset(When.__dataclass_fields__)


def _inside(w: When) -> _Box:
    unknown = {f for f in _KNOWN if getattr(w, f) != getattr(When(), f)} - _READ
    assert not unknown, f"tests/support/exposure.py does not build facts for when.{', when.'.join(sorted(unknown))}"
    box: _Box | None = _Box()
    for name, inside, _ in _steps(w):
        assert box is not None
        box = inside(box)
        assert box is not None, f"no value meets the {name} condition"
    assert box is not None
    return box


_READ = frozenset({
    "packages", "absent", "python", "gpu_count", "compute_capability", "gpu_name", "nvlink", "driver", "driver_cuda",
    "torch_cuda", "torch_cpu", "launcher", "distributed_type", "fsdp_version", "zero_stage", "env", "env_unset",
    "shm_mib", "container", "script",
})


def exposed(w: When) -> Facts:
    """Facts inside every condition of `w`."""
    return _facts(_inside(w))


def cleared(w: When) -> Iterator[tuple[str, Facts]]:
    """(condition, facts inside every other condition and outside this one), for each condition that has an outside."""
    box = _inside(w)
    for name, _, outside in _steps(w):
        moved = outside(box)
        if moved is not None:
            yield name, _facts(moved)


def _facts(b: _Box) -> Facts:
    board = gpus(b.gpu_count, cc=b.cc, name=b.gpu_name or _name(b.cc))
    links: Any = tuple(
        Link(a=i, b=j, interconnect=Interconnect.NVLINK if b.nvlink else Interconnect.PCIE_HOST_BRIDGE)
        for i in range(b.gpu_count) for j in range(b.gpu_count) if i != j)
    hardware = Hardware(source=HardwareSource.NVML, driver=b.driver, driver_cuda=b.driver_cuda, gpus=board, links=links)
    packages = dict(b.packages)
    torch = None
    if b.torch or "torch" in packages:
        torch = torch_build(packages.get("torch", "2.5.1"), cuda=b.torch_cuda)
        packages.setdefault("torch", torch.version)
    accelerate = None
    if b.accelerate is not None:
        dt, fv, zs = b.accelerate
        accelerate = AccelerateConfig(path="accelerate.yaml", distributed_type=dt, num_processes=None,
                                      mixed_precision=None, fsdp_version=fv, zero_stage=zs)
    return build_facts(
        python=interpreter(version=f"{b.python}.0", markers=_markers(b.python)),
        packages=distributions(packages),
        torch=torch,
        hardware=hardware,
        launch=launch_by(b.launcher, accelerate=accelerate, env=dict(b.env),
                         shm_bytes=(b.shm_mib or 65536) * 1024 * 1024, container="docker" if b.container else None),
        script=None if b.script is None else _script(dict(b.script)),
    )


def _name(cc: str) -> str:
    return GPU_NAMES.get(cc, f"NVIDIA GPU sm_{cc.replace('.', '')}")


def _script(fields: dict[str, Any]) -> Script:
    plain: dict[str, Any] = {"trainers": (), "device_maps": (), "use_vllm": None, "vllm_mode": None,
                             "config_access": False, "gradient_checkpointing": None, "use_cache": None}
    return Script(path="train.py", **{**plain, **fields})
