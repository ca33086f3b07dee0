"""Where facts come from: a saved facts file, values declared on the command line, and the host probes.

The only package that touches the host (processes, environment variables, NVML, the cache directory).
"""
