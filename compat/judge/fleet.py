"""Members of one job × Matrix → FleetReport: doctor's checks on each, then the cross-node checks.

Every cross-node check is the same question asked of a different aspect: reduce each member's
facts to one value (a version, a variable, a GPU model), then report the aspects with more than
one value. Ranks of one node that agree are named by their node, so 4 ranks on 2 nodes read as 2.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable

from compat.judge.diagnose import diagnose, fails
from compat.matrix import Matrix
from compat.matrix.releases import TRACKED
from compat.model.facts import Facts, TorchBuild
from compat.model.findings import Finding, Severity, Status, sort_findings
from compat.model.fleet import (
    Aspect,
    Change,
    Difference,
    FleetReport,
    Member,
    MemberState,
    NodeStatus,
    PairTiming,
    SharedFinding,
    Smoke,
    Variant,
    WorldCheck,
    WorldProblem,
)
from compat.model.unknown import Unknown
from compat.timeline.links import ApiSource

COMPARED_ENV = ("NCCL_", "CUDA_", "HF_")
"""Variables compared across nodes: the ones that change what NCCL, CUDA or the Hub do."""
EXTRA_PACKAGES = ("nvidia-nccl-cu11", "nvidia-nccl-cu12", "nvidia-nccl-cu13")
"""Untracked packages whose drift matters: the NCCL wheel torch loads."""

_SEVERITY = {
    Aspect.PACKAGE: Severity.ERROR,  # different code on the ranks of one job: hangs and wrong results
    Aspect.TORCH_BUILD: Severity.ERROR,
    Aspect.TORCH_CUDA: Severity.ERROR,
    Aspect.NCCL: Severity.ERROR,
    Aspect.PYTHON: Severity.WARNING,
    Aspect.DRIVER_BRANCH: Severity.WARNING,
    Aspect.DRIVER: Severity.INFO,
    Aspect.GPU_MODEL: Severity.WARNING,
    Aspect.GPU_MEMORY: Severity.WARNING,
    Aspect.GPU_COUNT: Severity.WARNING,
    Aspect.SHM: Severity.INFO,  # a /dev/shm that is too small is doctor's finding on that node
}

Key = tuple[Aspect, str]


def member_label(member: Member) -> str:
    return member.node if member.rank is None else f"{member.node}[rank {member.rank}]"


def aspects(facts: Facts) -> dict[Key, str | None]:
    """The value of every compared aspect of one member; an unknown aspect is left out (never compared)."""
    out: dict[Key, str | None] = {}
    if not isinstance(facts.packages, Unknown):
        by_name = {d.name: d.version for d in facts.packages}
        for name in (*TRACKED, *EXTRA_PACKAGES):
            if name != "torch":  # torch is TORCH_BUILD, local tag included
                out[(Aspect.PACKAGE, name)] = by_name.get(name)
    torch = facts.torch
    if not isinstance(torch, Unknown):
        out[(Aspect.TORCH_BUILD, "")] = torch.version if isinstance(torch, TorchBuild) else None
    if isinstance(torch, TorchBuild):
        if not isinstance(torch.cuda, Unknown):
            out[(Aspect.TORCH_CUDA, "")] = torch.cuda
        if not isinstance(torch.nccl, Unknown):
            out[(Aspect.NCCL, "")] = torch.nccl
    out[(Aspect.PYTHON, "")] = ".".join(facts.python.version.split(".")[:2])
    hw = facts.hardware
    if not isinstance(hw.driver, Unknown) and "driver" not in facts.declared:
        out[(Aspect.DRIVER_BRANCH, "")] = hw.driver.split(".")[0] if hw.driver else None
        out[(Aspect.DRIVER, "")] = hw.driver
    if not isinstance(hw.gpus, Unknown):
        models = Counter(g.name for g in hw.gpus)
        out[(Aspect.GPU_MODEL, "")] = ", ".join(f"{n}× {name}" for name, n in sorted(models.items())) or None
        memory = sorted({g.memory_mib for g in hw.gpus if not isinstance(g.memory_mib, Unknown)})
        out[(Aspect.GPU_MEMORY, "")] = ", ".join(f"{m} MiB" for m in memory) or None
    visible = facts.visible_gpus()
    if not isinstance(visible, Unknown):
        out[(Aspect.GPU_COUNT, "")] = str(visible)
    for name, value in facts.launch.env.items():
        if name.startswith(COMPARED_ENV):
            out[(Aspect.ENV, name)] = value
    if not isinstance(facts.launch.shm_bytes, Unknown):
        out[(Aspect.SHM, "")] = f"{facts.launch.shm_bytes // 2**20} MiB"
    return out


def _severity(key: Key) -> Severity:
    aspect, subject = key
    if aspect is Aspect.ENV:
        return Severity.INFO if subject.startswith("HF_") else Severity.WARNING
    return _SEVERITY[aspect]


def _names(members: list[Member], chosen: set[int], by_node: dict[str, list[int]]) -> tuple[str, ...]:
    """Labels for the chosen members: a node whose every member is chosen is named once."""
    names: list[str] = []
    for node, idxs in by_node.items():
        hit = [i for i in idxs if i in chosen]
        if not hit:
            continue
        if len(hit) == len(idxs):
            names.append(node)
        else:
            names.extend(member_label(members[i]) for i in hit)
    return tuple(sorted(names))


def differences(members: list[Member], values: list[dict[Key, str | None] | None]) -> tuple[Difference, ...]:
    """Aspects with more than one value among the members that answered."""
    by_node = _by_node(members)
    keys = sorted({k for v in values if v is not None for k in v}, key=lambda k: (k[0].value, k[1]))
    out: list[Difference] = []
    for key in keys:
        groups: dict[str | None, set[int]] = defaultdict(set)
        answered = [i for i, v in enumerate(values) if v is not None]
        for i in answered:
            vals = values[i]
            assert vals is not None
            if key in vals:
                groups[vals[key]].add(i)
            elif key[0] is Aspect.ENV:
                groups[None].add(i)  # not set is a value: one node without NCCL_IB_HCA differs
        if len(groups) < 2:
            continue
        variants = [Variant(value=v, members=_names(members, idx, by_node)) for v, idx in groups.items()]
        variants.sort(key=lambda var: (-len(groups[var.value]), var.value or ""))
        out.append(Difference(aspect=key[0], subject=key[1], severity=_severity(key), variants=tuple(variants)))
    out.sort(key=lambda d: (-d.severity.rank, d.aspect.value, d.subject))
    return tuple(out)


def _by_node(members: list[Member]) -> dict[str, list[int]]:
    by_node: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(members):
        by_node[m.node].append(i)
    return dict(by_node)


def shared_findings(members: list[Member], findings: list[tuple[Finding, ...] | None]) -> tuple[SharedFinding, ...]:
    """Doctor's findings of every member, each once with the members it holds on."""
    by_node = _by_node(members)
    where: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    first: dict[tuple[str, str, str], Finding] = {}
    for i, found in enumerate(findings):
        for f in found or ():
            key = (f.id, f.status.value, f.title)
            where[key].add(i)
            first.setdefault(key, f)
    ordered = sort_findings(list(first.values()))
    return tuple(
        SharedFinding(finding=f, members=_names(members, where[(f.id, f.status.value, f.title)], by_node)) for f in ordered
    )


def world_checks(members: list[Member], world_size: int | None) -> tuple[WorldCheck, ...]:
    """The world size and each node's ranks against the GPUs they can see (GPU jobs only)."""
    node_gpus: dict[str, int] = {}
    node_ranks: Counter[str] = Counter()
    cuda_job = False
    for m in members:
        if m.facts is None:
            continue
        visible = m.facts.visible_gpus()
        gpus = m.facts.hardware.gpus
        if isinstance(visible, Unknown) or isinstance(gpus, Unknown):
            continue
        torch = m.facts.torch
        cuda_job = cuda_job or (isinstance(torch, TorchBuild) and isinstance(torch.cuda, str) and len(gpus) > 0)
        node_gpus[m.node] = max(node_gpus.get(m.node, 0), len(gpus))
        node_ranks[m.node] += 1 if m.rank is not None else 0
        if m.rank is None:
            local = m.facts.launch.env.get("LOCAL_WORLD_SIZE")
            if local and local.isdigit():
                node_ranks[m.node] = int(local)
    if not cuda_job:
        return ()  # a CPU job (gloo) has no GPUs to count
    out: list[WorldCheck] = []
    for node in sorted(node_gpus):
        if node_ranks[node] > node_gpus[node]:
            out.append(WorldCheck(problem=WorldProblem.MORE_RANKS_THAN_GPUS, severity=Severity.ERROR,
                                  world_size=world_size or 0, gpus=node_gpus[node], members=(node,), ranks=node_ranks[node]))
    total = sum(node_gpus.values())
    if world_size is not None and world_size > total:
        out.append(WorldCheck(problem=WorldProblem.WORLD_EXCEEDS_GPUS, severity=Severity.ERROR, world_size=world_size, gpus=total))
    return tuple(out)


def slow_pairs(smoke: Smoke | None) -> tuple[PairTiming, ...]:
    """Links far below the others: under half the median bus bandwidth (needs three pairs to have a median)."""
    if smoke is None:
        return ()
    measured = [p.bus_gbps for p in smoke.pairs if p.bus_gbps is not None]
    if len(measured) < 3:
        return ()
    median = statistics.median(measured)
    return tuple(p for p in smoke.pairs if p.bus_gbps is not None and p.bus_gbps < median / 2)


def changes(old: list[Member], new: list[Member]) -> tuple[Change, ...]:
    """Per member present in both snapshots, each aspect whose value changed."""
    before = {member_label(m): aspects(m.facts) for m in old if m.facts is not None}
    out: list[Change] = []
    for m in new:
        label = member_label(m)
        if m.facts is None or label not in before:
            continue
        was, now = before[label], aspects(m.facts)
        for key in sorted(set(was) | set(now), key=lambda k: (k[0].value, k[1])):
            if key[0] not in (Aspect.ENV, Aspect.PACKAGE) and (key not in was or key not in now):
                continue  # an aspect unknown on one side is not a change
            a, b = was.get(key), now.get(key)
            if a != b:
                out.append(Change(member=label, aspect=key[0], subject=key[1], before=a, after=b))
    return tuple(sorted(out, key=lambda c: (c.member, c.aspect.value, c.subject)))


def _reduced(members: list[Member]) -> list[dict[Key, str | None] | None]:
    """Each member's aspects; ranks of one node and nodes cloned from one image share one facts object,
    reduced once (10,000 nodes of a few images cost a few reductions)."""
    seen: dict[int, dict[Key, str | None]] = {}
    out: list[dict[Key, str | None] | None] = []
    for m in members:
        if m.facts is None:
            out.append(None)
            continue
        if id(m.facts) not in seen:
            seen[id(m.facts)] = aspects(m.facts)
        out.append(seen[id(m.facts)])
    return out


def _diagnosed(members: list[Member], matrix: Matrix) -> list[tuple[Finding, ...] | None]:
    """Doctor's findings per member; identical facts (ranks of one node, cloned nodes) are judged once, and every
    member's import links are read from one API source, whose decoded edges and answers serve every distinct
    snapshot (a source per snapshot read and decoded the index's tables again for each)."""
    source = ApiSource(matrix.roots)
    seen: dict[str, tuple[Finding, ...]] = {}
    keys: dict[int, str] = {}  # one snapshot object shared by many members is encoded once
    out: list[tuple[Finding, ...] | None] = []
    for m in members:
        if m.facts is None:
            out.append(None)
            continue
        key = keys.get(id(m.facts))
        if key is None:
            key = keys[id(m.facts)] = repr(m.facts)  # equal facts, equal repr (a differing dict order only misses the cache)
        if key not in seen:
            seen[key] = diagnose(m.facts, matrix, api=source)
        out.append(seen[key])
    return out


def judge_fleet(
    members: Iterable[Member],
    matrix: Matrix,
    *,
    world_size: int | None = None,
    smoke: Smoke | None = None,
    baseline: Iterable[Member] | None = None,
    fail_on: Severity = Severity.ERROR,
    strict: bool = False,
) -> FleetReport:
    ordered = sorted(members, key=lambda m: (m.node, m.rank if m.rank is not None else -1))
    values = _reduced(ordered)
    found = _diagnosed(ordered, matrix)
    shared = shared_findings(ordered, found)
    missing = tuple(
        NodeStatus(member=member_label(m), state=m.state, detail=m.detail)
        for m in ordered if m.state is not MemberState.OK or m.facts is None
    )
    diffs = differences(ordered, values)
    world = world_checks(ordered, world_size)
    slow = slow_pairs(smoke)
    smoke_failed = smoke is not None and (
        smoke.error is not None or any(r.seconds is None for r in smoke.ranks) or any(p.seconds is None for p in smoke.pairs)
    )
    failed = (
        bool(missing) or smoke_failed
        or any(d.severity.rank >= fail_on.rank for d in diffs)
        or any(w.severity.rank >= fail_on.rank for w in world)
        or fails(tuple(s.finding for s in shared), fail_on, strict=strict)
        or (bool(slow) and Severity.WARNING.rank >= fail_on.rank)
    )
    return FleetReport(
        members=tuple(member_label(m) for m in ordered),
        nodes=len({m.node for m in ordered}),
        world_size=world_size,
        missing=missing,
        differences=diffs,
        world=world,
        findings=tuple(s for s in shared if s.finding.status is Status.FOUND or strict),
        smoke=smoke,
        slow_pairs=slow,
        baseline=changes(list(baseline), ordered) if baseline is not None else None,
        failed=failed,
    )
