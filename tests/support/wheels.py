"""Tiny wheels built in memory for the test package indexes on 127.0.0.1 (only what pip and uv read)."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from collections.abc import Mapping, Sequence


def wheel(name: str, version: str, requires: Sequence[str] = (), requires_python: str | None = None,
          extras: Sequence[str] = (), modules: Mapping[str, bytes] | None = None) -> bytes:
    """A wheel of METADATA, WHEEL and RECORD (and `modules`, path -> bytes, when given), built in memory."""
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}\n")
    meta += [f"Provides-Extra: {e}\n" for e in extras] + [f"Requires-Dist: {r}\n" for r in requires]
    files = {
        **(modules or {}),
        f"{dist}/METADATA": "".join(meta).encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: compat-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, data in sorted(files.items()):
            zf.writestr(path, data)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return buf.getvalue()

