"""The `when` clause of a signature: conditions on the facts, in standard notations only.

PEP 440 specifiers for versions and counts, PEP 508 markers for Python and platform, lists for
closed sets. No eval, no expression language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from compat.matrix._toml import Table, parse_specifier
from compat.model.launcher import Launcher, canonical

if TYPE_CHECKING:
    from packaging.markers import Marker  # parsed by Table.marker; a compiled matrix is read back without it


@dataclass(frozen=True, kw_only=True)
class ScriptWhen:
    trainers: frozenset[str] = frozenset()
    """The script uses any of these classes."""
    device_map: frozenset[str] = frozenset()
    """The script passes any of these literal device_map values."""
    use_vllm: bool | None = None
    vllm_mode: frozenset[str] = frozenset()
    config_access: bool | None = None
    gradient_checkpointing: bool | None = None
    use_cache: bool | None = None
    use_liger_kernel: bool | None = None
    """The script turns Liger's model patches on (True) or leaves them off (False)."""

    def is_empty(self) -> bool:
        return self == ScriptWhen()


@dataclass(frozen=True, kw_only=True)
class When:
    packages: tuple[tuple[str, SpecifierSet], ...] = ()
    """Each package is installed at a version in its specifier ("" = any version)."""
    absent: tuple[str, ...] = ()
    """Each of these packages is not installed."""
    python: Marker | None = None
    """A PEP 508 marker over the interpreter's environment."""
    gpu_count: SpecifierSet | None = None
    compute_capability: SpecifierSet | None = None
    """At least one GPU has a compute capability in this range."""
    gpu_name: tuple[str, ...] = ()
    """At least one GPU's name contains one of these (case-insensitive)."""
    nvlink: bool | None = None
    """True: every GPU pair is NVLink-connected; False: some pair is not."""
    driver: SpecifierSet | None = None
    driver_cuda: SpecifierSet | None = None
    torch_cuda: SpecifierSet | None = None
    """The torch build's CUDA version is in this range (a CPU build never matches)."""
    torch_cpu: bool | None = None
    """True: torch is a CPU-only build."""
    launcher: frozenset[Launcher] = frozenset()
    distributed_type: frozenset[str] = frozenset()
    fsdp_version: frozenset[int] = frozenset()
    zero_stage: frozenset[int] = frozenset()
    env: tuple[tuple[str, str], ...] = ()
    """Each variable is set and contains the given text ("" = set to anything)."""
    env_unset: tuple[str, ...] = ()
    """Each of these variables is not set (a workaround that is absent)."""
    shm_mib: SpecifierSet | None = None
    container: bool | None = None
    script: ScriptWhen = ScriptWhen()


LAUNCHERS = frozenset(launcher.value for launcher in Launcher)
_KEYS = (
    "packages", "absent", "python", "gpu_count", "compute_capability", "gpu_name", "nvlink",
    "driver", "driver_cuda", "torch_cuda", "torch_cpu", "launcher", "distributed_type",
    "fsdp_version", "zero_stage", "env", "env_unset", "shm_mib", "container", "script",
)
_SCRIPT_KEYS = (
    "trainers", "device_map", "use_vllm", "vllm_mode", "config_access",
    "gradient_checkpointing", "use_cache", "use_liger_kernel",
)


def parse_when(t: Table) -> When:
    t.only(*_KEYS)
    packages: tuple[tuple[str, SpecifierSet], ...] = ()
    if "packages" in t:
        pt = t.table("packages")
        packages = tuple(
            sorted((canonical(name), pt.specifier(name)) for name in pt.data)
        )
    launcher_names = frozenset(t.strs("launcher", ()))
    for name in launcher_names - LAUNCHERS:
        t.fail("launcher", f"{name!r} is not one of {', '.join(sorted(LAUNCHERS))}")
    launcher = frozenset(Launcher(name) for name in launcher_names)
    env: tuple[tuple[str, str], ...] = ()
    if "env" in t:
        et = t.table("env")
        env = tuple(sorted((name, et._get(name, str, "a string", "")) for name in et.data))
    return When(
        packages=packages,
        absent=tuple(sorted(canonical(n) for n in t.strs("absent", ()))),
        python=t.marker("python", None),
        gpu_count=t.specifier("gpu_count", None),
        compute_capability=t.specifier("compute_capability", None),
        gpu_name=t.strs("gpu_name", ()),
        nvlink=t.bool("nvlink", None),
        driver=t.specifier("driver", None),
        driver_cuda=t.specifier("driver_cuda", None),
        torch_cuda=t.specifier("torch_cuda", None),
        torch_cpu=t.bool("torch_cpu", None),
        launcher=launcher,
        distributed_type=frozenset(s.upper() for s in t.strs("distributed_type", ())),
        fsdp_version=_ints(t, "fsdp_version"),
        zero_stage=_ints(t, "zero_stage"),
        env=env,
        env_unset=tuple(sorted(t.strs("env_unset", ()))),
        shm_mib=t.specifier("shm_mib", None),
        container=t.bool("container", None),
        script=_parse_script(t.table("script")) if "script" in t else ScriptWhen(),
    )


def _ints(t: Table, key: str) -> frozenset[int]:
    value = t._get(key, list, "a list of integers", [])
    for i, item in enumerate(value):
        if not isinstance(item, int) or isinstance(item, bool):
            t.fail(f"{key}[{i}]", "expected an integer")
    return frozenset(value)


def _parse_script(t: Table) -> ScriptWhen:
    t.only(*_SCRIPT_KEYS)
    return ScriptWhen(
        trainers=frozenset(t.strs("trainers", ())),
        device_map=frozenset(t.strs("device_map", ())),
        use_vllm=t.bool("use_vllm", None),
        vllm_mode=frozenset(t.strs("vllm_mode", ())),
        config_access=t.bool("config_access", None),
        gradient_checkpointing=t.bool("gradient_checkpointing", None),
        use_cache=t.bool("use_cache", None),
        use_liger_kernel=t.bool("use_liger_kernel", None),
    )


__all__ = ["LAUNCHERS", "ScriptWhen", "When", "parse_specifier", "parse_when"]
