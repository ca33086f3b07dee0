"""From targets and hardware to a pinned set (a Lock), and from an installed environment to it (a Plan)."""
