"""Built-in checks: pure functions of Facts × Matrix that yield findings.

Each module holds one family of checks; `ALL` is the order doctor runs them in. A check that
lacks a fact it needs yields a CANNOT_CHECK finding saying which fact and why, never nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from compat.judge.checks import cuda, extensions, gpu_features, import_links, launch, requirements, toolchain, topology
from compat.matrix import Matrix
from compat.model.facts import Facts
from compat.model.findings import Finding

Check = Callable[[Facts, Matrix], Iterable[Finding]]

ALL: tuple[Check, ...] = (
    requirements.check_requirements,
    cuda.check_torch_import,
    cuda.check_driver,
    cuda.check_cpu_build,
    cuda.check_arch,
    gpu_features.check_precision,
    gpu_features.check_flash_attn,
    extensions.check_extension_wheels,
    launch.check_launcher,
    launch.check_processes,
    launch.check_visible_devices,
    launch.check_slurm_binding,
    toolchain.check_nvcc,
    toolchain.check_host_compiler,
    toolchain.check_ld_library_path,
    toolchain.check_toolkit_runtime,
    toolchain.check_container_cuda,
    topology.check_p2p,
    topology.check_shm,
    topology.check_nccl,
)

OWNS: Mapping[str, frozenset[str]] = {
    **requirements.OWNS, **cuda.OWNS, **extensions.OWNS, **gpu_features.OWNS, **launch.OWNS, **toolchain.OWNS,
    **topology.OWNS, **import_links.OWNS,
}
"""Catalog entry id → the `{fields}` a built-in check fills in its words, declared by each module.

A catalog entry with one of these ids describes the failure the check decides: doctor reports it
through the check (which knows more than a `when` clause), never also through `catalog_findings`.
"""

OWNED_IDS = frozenset(OWNS)
