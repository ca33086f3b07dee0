"""The versions a log reports outside its errors: an issue template's environment lines (`- Transformers version:
4.45.0`, `vLLM version: 0.5.0`, `trl version: 0.12.0`) and `pip freeze` lines (`transformers==4.46.0`). The API
timeline takes them for a package the facts do not give (compat/timeline/drift.py `answer`, `stated`), so an answer
never asks for a floor the reported release already passes.
"""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

_LABELLED = re.compile(r"^[\s>*`|-]*`?([A-Za-z][\w.-]{0,40}?)`?\s+[Vv]ersion\s*:\s*`?v?(\d+(?:\.\w+){1,4}(?:\+\w+)?)`?\s*(?:\(|$)")
_PINNED = re.compile(r"^[\s>*`|-]*([A-Za-z][\w.-]{0,40})\s*==\s*(\d+(?:\.\w+){1,4}(?:\+\w+)?)\s*$")
_ALIASES = {"pytorch": "torch"}
_NOT_PACKAGES = frozenset({"python", "cuda", "cudnn", "nvidia-driver", "driver", "gcc", "os", "platform", "gpu", "nccl"})
"""Labels of the host, which the API timeline does not index: never taken for a package."""


def reported_version(line: str) -> tuple[str, str] | None:
    """(distribution, version) a line reports, else None."""
    m = _LABELLED.search(line) or _PINNED.search(line)
    if m is None:
        return None
    name: str = canonicalize_name(m.group(1))
    name = _ALIASES.get(name, name)
    return None if name in _NOT_PACKAGES else (name, m.group(2))


__all__ = ["reported_version"]
