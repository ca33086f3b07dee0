"""`compat fleet --smoke`: each node's `compat smoke` report folded into the fleet report (pure)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from compat.model.fleet import FleetReport, NodeSmoke
from compat.model.smoke import SmokeReport


def node_smoke(node: str, report: SmokeReport | str) -> NodeSmoke:
    """One node's smoke: its stages (the steps and output left out: they are in the node's own report), or why the
    node left no report."""
    if isinstance(report, str):
        return NodeSmoke(node=node, error=report)
    return NodeSmoke(node=node, stages=tuple(dataclasses.replace(s, steps=(), output=None) for s in report.stages))


def with_node_smoke(report: FleetReport, nodes: Iterable[NodeSmoke], expected: Iterable[str] = ()) -> FleetReport:
    """The fleet report with every node's smoke; a node that failed a stage, left no report, or is among `expected`
    (the nodes whose facts arrived) without one fails the report."""
    found = {n.node: n for n in nodes}
    for name in expected:
        found.setdefault(name, NodeSmoke(node=name, error="no smoke report from this node"))
    ordered = tuple(found[k] for k in sorted(found))
    failed = report.failed or any(n.error is not None or n.failed for n in ordered)
    return dataclasses.replace(report, node_smoke=ordered, failed=failed)
