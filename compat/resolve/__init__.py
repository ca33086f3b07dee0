"""From targets and hardware to a pinned set (a Lock), and from an installed environment to it (a Plan)."""

from compat.resolve.resolver import declared_target, parse_targets, resolve, target_facts

__all__ = ["declared_target", "parse_targets", "resolve", "target_facts"]
