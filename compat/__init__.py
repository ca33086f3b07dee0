"""compat: check an LLM post-training environment against a curated compatibility matrix."""

__version__ = "0.1.0"
