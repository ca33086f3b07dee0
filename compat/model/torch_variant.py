"""A torch build variant: which accelerator its wheels were built for ("cpu", "cu129", "rocm6.2", "xpu")."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# Bounded digits: a label may come from a user's pin (torch==2.6.0+cu124), and no runtime has more.
_LABEL = re.compile(r"^(?:cpu|cu(?P<major>\d{1,3})(?P<minor>\d)|rocm(?P<rocm>\d{1,4}(?:\.\d{1,4}){0,3})|xpu)$")


class Accelerator(str, enum.Enum):
    """What a build runs its kernels on; the order is the order builds sort in."""

    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"
    XPU = "xpu"


@dataclass(frozen=True, kw_only=True)
class TorchVariant:
    """One build of a torch release, named as its wheels' local version label and PyTorch's index directory."""

    label: str
    """The label as the wheel index writes it ("cu124"); `parse` is the way to make one."""

    @classmethod
    def parse(cls, label: str) -> TorchVariant:
        """The variant a label names ("cu124", "cpu", "rocm6.2", "xpu"); ValueError for anything else."""
        text = label.strip()
        if not _LABEL.match(text):
            raise ValueError(f"{label!r} is not a torch build variant (cpu, cu124, rocm6.2, xpu)")
        return cls(label=text)

    @classmethod
    def find(cls, label: str) -> TorchVariant | None:
        """The variant a label names, or None when it names none (a distro's local tag)."""
        try:
            return cls.parse(label)
        except ValueError:
            return None

    @classmethod
    def of_version(cls, version: str) -> TorchVariant | None:
        """The variant in a version's local label ("2.6.0+cu124" → cu124); None without one or for another tag."""
        _, plus, local = version.partition("+")
        return cls.find(local) if plus else None

    @property
    def accelerator(self) -> Accelerator:
        if self.label == "cpu":
            return Accelerator.CPU
        if self.label.startswith("rocm"):
            return Accelerator.ROCM
        if self.label == "xpu":
            return Accelerator.XPU
        return Accelerator.CUDA

    @property
    def is_cpu(self) -> bool:
        return self.accelerator is Accelerator.CPU

    @property
    def cuda_version(self) -> tuple[int, int] | None:
        """(major, minor) of a CUDA build's runtime ((12, 4) for cu124); None for any other build."""
        m = _LABEL.match(self.label)
        if m is None or m.group("major") is None:
            return None
        return int(m.group("major")), int(m.group("minor"))

    @property
    def cuda(self) -> str | None:
        """A CUDA build's runtime as CUDA writes it ("12.4"); None for any other build."""
        version = self.cuda_version
        return f"{version[0]}.{version[1]}" if version else None

    @property
    def cuda_major(self) -> int | None:
        version = self.cuda_version
        return version[0] if version else None

    def sort_key(self) -> tuple[int, tuple[int, ...]]:
        """CPU first, then CUDA builds oldest runtime first, then ROCm by version, then XPU."""
        order = list(Accelerator).index(self.accelerator)
        if self.accelerator is Accelerator.CUDA:
            return order, self.cuda_version or ()
        if self.accelerator is Accelerator.ROCM:
            return order, tuple(int(p) for p in self.label.removeprefix("rocm").split("."))
        return order, ()

    def __lt__(self, other: TorchVariant) -> bool:
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        return self.label
