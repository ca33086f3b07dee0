"""One member's facts from the text it sent or saved: parsed and bounded, or why not.

Every source of a fleet (saved files, srun, Ray, torch.distributed) reads the members' facts
here, so one malformed snapshot (a 5,000-digit version, a package name no index holds, a torn
file) becomes that member's reason and never the whole fleet's error.
"""

from __future__ import annotations

from compat.errors import CompatError
from compat.model.facts import Facts, load_facts
from compat.sources.bounds import bound_facts


def read_snapshot(text: str, *, origin: str) -> Facts | str:
    """The facts in `text`, bounded as doctor bounds them, or the one-line reason they cannot be read."""
    try:
        return bound_facts(load_facts(text, origin=origin), origin=origin)
    except CompatError as exc:
        return " ".join(str(exc).split())
