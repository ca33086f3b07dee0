"""Where facts come from: a saved facts file, values declared on the command line, and the host probes.

The only package that touches the host (processes, environment variables, NVML, the cache directory):
settings.py reads compat's own variables into a Settings record, facts_file.py and log_file.py open
the files a command names, cache.py stores what can be recomputed, probe/ inspects the machine.
`gather` (environment.py) is the one entry for a command's facts: snapshot or probe, declared values
and bounds, computed once.
"""

from compat.sources.environment import Environment, gather

__all__ = ["Environment", "gather"]
