"""`torchrun ... -m compat.fleet` (or `python -m compat.fleet` under any launcher): see compat.cli.fleet."""
