"""The last check on facts before anything judges them: values in the shapes the checks read.

Facts arrive from a saved file anyone may have written, from a child interpreter, from NVML and
nvidia-smi of any age, and from the command line. A driver version that is not one, a compute
capability of "a.b" or a version with a 5,000-digit number (which `packaging` cannot even turn
into an int on Python 3.11+) would otherwise reach a check and end in a traceback, or worse, in
a pass. Hardware values out of shape become an Unknown with the reason (the check then says it
cannot check); a package version compat cannot compare is a one-line error naming it.
Credentials in URL requirements are masked here too, so the facts never hold them.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TypeVar

from packaging.version import Version

from compat.errors import FactsError
from compat.model.facts import Facts, Gpu, Hardware, TorchBuild
from compat.model.unknown import Unknown
from compat.redact import redact_text
from compat.version_text import huge_number, short, unreadable_version

_MAX_REQUIREMENT = 4096
_MAX_NAME = 200
"""Characters of a distribution name: a longer one is no file or index entry compat reads (other
odd names are kept and escaped where printed)."""
_DRIVER = re.compile(r"\d{1,4}(?:\.\d{1,4}){1,3}")
_CUDA = re.compile(r"\d{1,3}\.\d{1,3}(?:\.\d{1,4})?")
_NCCL = re.compile(r"\d{1,3}\.\d{1,4}\.\d{1,4}")
_CC = re.compile(r"\d{1,2}\.\d{1,2}")
_MAX_MIB = 2**32  # 4 PiB of GPU memory
_V = TypeVar("_V", bound="str | None | Unknown")


def bound_facts(facts: Facts, *, origin: str) -> Facts:
    """`facts` with out-of-shape hardware values made Unknown; raises FactsError on a version
    compat cannot compare (`origin` names where the facts came from)."""
    packages = facts.packages
    for dist in () if isinstance(packages, Unknown) else packages:
        if len(dist.name) > _MAX_NAME:
            raise FactsError(f"{origin}: package name {short(dist.name)} is longer than any distribution name")
        _check_version(dist.version, f"{origin}: package {dist.name!r}")
        for req in dist.requires:
            # A requirement is read with packaging, whose Version turns every number into an int.
            if len(req) > _MAX_REQUIREMENT or huge_number(req):
                raise FactsError(f"{origin}: package {dist.name!r}: requirement {short(req)} is not one compat can read")
    if not isinstance(packages, Unknown):
        # `pkg @ https://user:token@host/...` requirements: the facts never hold the credentials.
        packages = tuple(
            d if not any("://" in r for r in d.requires)
            else dataclasses.replace(d, requires=tuple(redact_text(r) for r in d.requires))
            for d in packages
        )
    _check_version(facts.python.version, f"{origin}: python")
    torch = facts.torch
    if isinstance(torch, TorchBuild):
        _check_version(torch.version, f"{origin}: torch")
        try:
            Version(torch.version)
        except ValueError:  # InvalidVersion, or a number longer than int() reads
            # Every torch check compares this version: an import that reports another shape is unknown.
            torch = Unknown(reason=f"torch reports the version {short(torch.version)}, which is not a version")
        else:
            torch = dataclasses.replace(torch, cuda=_shaped(torch.cuda, _CUDA, "torch's CUDA version"),
                                        nccl=_shaped(torch.nccl, _NCCL, "NCCL version torch loads"))
    return dataclasses.replace(facts, packages=packages, torch=torch, hardware=_bound_hardware(facts.hardware))


def _check_version(text: str, where: str) -> None:
    if unreadable_version(text):
        raise FactsError(f"{where}: version {short(text)} is not a version compat can compare")


def _bound_hardware(hw: Hardware) -> Hardware:
    gpus = hw.gpus
    if not isinstance(gpus, Unknown):
        gpus = tuple(_bound_gpu(g) for g in gpus)
    return dataclasses.replace(
        hw,
        driver=_shaped(hw.driver, _DRIVER, "driver version"),
        driver_cuda=_shaped(hw.driver_cuda, _CUDA, "CUDA version of the driver"),
        gpus=gpus,
    )


def _bound_gpu(gpu: Gpu) -> Gpu:
    memory = gpu.memory_mib
    if isinstance(memory, int) and not 0 < memory < _MAX_MIB:
        memory = Unknown(reason=f"GPU {gpu.index} reports {memory} MiB of memory")
    cc = _shaped(gpu.compute_capability, _CC, f"compute capability of GPU {gpu.index}")
    return dataclasses.replace(gpu, name=gpu.name[:200], compute_capability=cc, memory_mib=memory)


def _shaped(value: _V, shape: re.Pattern[str], what: str) -> _V | Unknown:
    if isinstance(value, str) and not shape.fullmatch(value.strip()):
        return Unknown(reason=f"the {what} {short(value)} cannot be read")
    return value
