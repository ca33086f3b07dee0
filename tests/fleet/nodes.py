"""Fleets built from recorded facts (tests/data/fleet) with small, known perturbations."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from compat.model.facts import Distribution, Facts, dump_facts, load_facts

DATA = Path(__file__).resolve().parents[1] / "data" / "fleet"


def base() -> Facts:
    return load_facts((DATA / "h100-8x.json").read_text(encoding="utf-8"))


def with_package(facts: Facts, name: str, version: str) -> Facts:
    assert not isinstance(facts.packages, type(None))
    pkgs = [d for d in facts.packages if d.name != name] + [Distribution(name=name, version=version, requires=())]
    return dataclasses.replace(facts, packages=tuple(sorted(pkgs, key=lambda d: d.name)))


def with_torch(facts: Facts, version: str) -> Facts:
    torch = dataclasses.replace(facts.torch, version=version)  # type: ignore[arg-type]
    return with_package(dataclasses.replace(facts, torch=torch), "torch", version)


def with_env(facts: Facts, **env: str) -> Facts:
    return dataclasses.replace(facts, launch=dataclasses.replace(facts.launch, env={**facts.launch.env, **env}))


def with_driver(facts: Facts, driver: str) -> Facts:
    return dataclasses.replace(facts, hardware=dataclasses.replace(facts.hardware, driver=driver))


def with_shm(facts: Facts, size: int) -> Facts:
    return dataclasses.replace(facts, launch=dataclasses.replace(facts.launch, shm_bytes=size))


def with_gpu_name(facts: Facts, name: str, memory_mib: int) -> Facts:
    gpus = tuple(dataclasses.replace(g, name=name, memory_mib=memory_mib) for g in facts.hardware.gpus)  # type: ignore[union-attr]
    return dataclasses.replace(facts, hardware=dataclasses.replace(facts.hardware, gpus=gpus))


def cluster(n: int = 32) -> dict[str, Facts]:
    """node-01..node-NN: the same box, except node-07 and node-12 (torch 2.6.0+cu124), node-03 (NCCL_IB_HCA set,
    a 64 MiB /dev/shm), node-20 (driver 535.183.01, an H100 PCIe) and, past 16 nodes, node-17 (another trl)."""
    box = base()
    nodes = {f"node-{i:02d}": box for i in range(1, n + 1)}
    nodes["node-07"] = nodes["node-12"] = with_torch(box, "2.6.0+cu124")
    nodes["node-03"] = with_shm(with_env(box, NCCL_IB_HCA="mlx5_0"), 64 * 2**20)
    nodes["node-20"] = with_gpu_name(with_driver(box, "535.183.01"), "NVIDIA H100 PCIe", 81559)
    if n > 16:
        nodes["node-17"] = with_package(box, "trl", "0.16.0")
    return nodes


def write_cluster(directory: Path, nodes: dict[str, Facts]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, facts in nodes.items():
        (directory / f"{name}.json").write_text(dump_facts(facts), encoding="utf-8")
    return directory


def scaled(n: int) -> dict[str, Facts]:
    """A larger fleet for the benchmark: cluster(32) repeated, with unique names."""
    nodes = cluster(32)
    out = {}
    for i in range(n):
        src = list(nodes.values())[i % 32]
        out[f"gpu-{i:03d}"] = src
    return out


if __name__ == "__main__":  # pragma: no cover - a helper for trying the command by hand
    import sys

    write_cluster(Path(sys.argv[1]), cluster(int(sys.argv[2]) if len(sys.argv) > 2 else 32))
    print(json.dumps(sorted(cluster())))
