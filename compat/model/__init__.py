"""Records: the frozen values that flow between stages (facts, findings, locks, plans). No I/O, no decisions."""
