"""Fakes of the host for the probe tests: an NVML module object and nvidia-smi scripts."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import SimpleNamespace

import pynvml

from tests.support.paths import DATA

NVIDIA = DATA / "nvidia"


class FakeNvmlError(Exception):
    pass


class FakeNvml:
    """Answers the NVML calls compat makes from a JSON spec; constants come from real pynvml."""

    NVMLError = FakeNvmlError

    def __init__(self, spec: dict, *, init_error: str | None = None) -> None:
        self.spec = spec
        self.init_error = init_error
        self.calls: list[str] = []
        for name in dir(pynvml):
            if name.startswith("NVML_") and name.isupper():
                setattr(self, name, getattr(pynvml, name))

    @classmethod
    def shape(cls, name: str) -> FakeNvml:
        return cls(json.loads((NVIDIA / name / "nvml.json").read_text()))

    def _gpu(self, h):
        return self.spec["gpus"][h]

    def nvmlInit(self):
        self.calls.append("init")
        if self.init_error:
            raise FakeNvmlError(self.init_error)

    def nvmlShutdown(self):
        self.calls.append("shutdown")

    def nvmlSystemGetDriverVersion(self):
        return self.spec["driver"]

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return self.spec["cuda"]

    def nvmlDeviceGetCount(self):
        return len(self.spec["gpus"])

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self._gpu(h)["name"].encode()  # older pynvml returns bytes

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return tuple(self._gpu(h)["cc"])

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(total=self._gpu(h)["memory_bytes"], free=0, used=0)

    def nvmlDeviceGetPciInfo(self, h):
        return SimpleNamespace(busId=self._gpu(h)["bus"])

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b):
        key = f"{min(a, b)}-{max(a, b)}"
        return getattr(pynvml, self.spec["topology"].get(key, self.spec["topology_default"]))

    def nvmlDeviceGetP2PStatus(self, a, b, index):
        key = f"{min(a, b)}-{max(a, b)}"
        return getattr(pynvml, self.spec["p2p"].get(key, self.spec["p2p_default"]))

    def _links(self, h):
        gpu = self._gpu(h)
        links = [("switch", None)] * gpu.get("nvlink_switch", 0)
        for bus, n in gpu.get("nvlink_peers", {}).items():
            links += [("gpu", bus)] * n
        return links

    def nvmlDeviceGetNvLinkState(self, h, link):
        links = self._links(h)
        if not links:
            raise FakeNvmlError("Not Supported")
        if link >= len(links):
            raise FakeNvmlError("Invalid Argument")
        return pynvml.NVML_FEATURE_ENABLED

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h, link):
        kind, _ = self._links(h)[link]
        return pynvml.NVML_NVLINK_DEVICE_TYPE_SWITCH if kind == "switch" else pynvml.NVML_NVLINK_DEVICE_TYPE_GPU

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h, link):
        return SimpleNamespace(busId=self._links(h)[link][1])


def fake_smi(tmp: Path, *, query: str | None = None, query_exit: int = 0, banner: str | None = None,
             topo: str | None = None, query_no_cc: str | None = None, body: str | None = None) -> str:
    """An executable nvidia-smi that prints recorded files chosen by its arguments."""
    tmp.mkdir(parents=True, exist_ok=True)

    def stash(name, text):
        if text is None:
            return "exit 9"
        (tmp / name).write_text(text)
        return f'cat "{tmp / name}"'

    script = body or f"""#!/bin/sh
case "$*" in
  *compute_cap*) {stash("q.txt", query)}; exit {query_exit} ;;
  --query-gpu*) {stash("q2.txt", query_no_cc)} ;;
  "topo -m") {stash("t.txt", topo)} ;;
  "") {stash("b.txt", banner)} ;;
  *) exit 9 ;;
esac
"""
    path = tmp / "nvidia-smi"
    path.write_text(script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def read(rel: str) -> str:
    return (NVIDIA / rel).read_text()
