"""Versions an error message states on both sides of a mismatch, checked against the facts.

Requirement gates ("tokenizers>=0.19,<0.20 is required ..., but found tokenizers==0.14.1"), the
installers' conflict reports (pip, uv, pkg_resources), binaries built for another torch, CUDA, cuDNN,
glibc or Python, GPUs below a compute capability, toolchains outside CUDA's range: each wording is
one `Phrasing` of the table below, read into `StatedVersion` records (what, needed, found, by whom,
which side to change). `check` then compares the found side with what is installed (packages,
Python, glibc, driver, toolkit, GPUs) and writes the command that changes it.

The general phrasings, last in the table, read the family of plain requirement statements whatever
the package ("X requires Y>=V", "Y >= V is required", "Y V or higher is required", "the minimum
supported Y version is V"), each with the found side that may follow (`_FOUND`, one place); they add
only what no specific phrasing read.

Every phrasing has a real line from a public thread in tests/explain/test_stated_versions.py. A
pattern starts with literal words or reads a package name at word starts only, and every repeat is
bounded: one long line costs linear time (tests/fault/test_long_lines.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compat.explain.owners import package_of
from compat.explain.stated import HOST_SUBJECTS, Change, StatedVersion
from compat.judge.commands import pip_command
from compat.model.installer import Installer
from compat.model.unknown import Unknown
from compat.version_text import unreadable_version

if TYPE_CHECKING:
    from compat.model.facts import Facts

_NAMES = {"pytorch": "torch", "flash-attention": "flash-attn", "g++": "gcc", "c++": "gcc", "cuda": "cuda"}
_VER = r"\d(?:[\w+*-]|\.(?=\w))*"
_PKG = r"(?<![\w.-])[A-Za-z][\w.-]*"
"""A package name, starting a word: tried at word starts only, or one long word is read n times (quadratic)."""
_SPEC = r"(?:[<>=!~]=?\s?[\w.*+]+\s?,?\s?){1,6}"
_CC = r"\d{1,2}\.\d"
"""A compute capability: 8.0, 12.0."""
_DOTTED = r"\d{1,4}\.\d(?:[\w+*-]|\.(?=\w)){0,40}"
"""A version with a dot (2.1, 4.58.0): the general phrasings read no bare number, which is more
often a count or a size ("n>=1 is required") than a release."""
_BOUND = r"(?:[<>]=?|==|~=)\s?" + _DOTTED + r"(?:,\s?(?:[<>!]=?|==|~=)\s?" + _DOTTED + r"){0,3}"
"""An operator bound: >=4.58.0, >= 2.1, ==0.8.5, >=2.7.1,<=2.7.4."""
_NOT_NAMES = frozenset({"version", "versions", "minimum", "maximum", "model", "models", "it", "this", "that", "which",
                        "capability", "compute", "gpu", "the", "a", "an", "one", "and", "or", "also", "still", "now", "only",
                        "api", "opset", "level", "required", "supported",
                        # words that stand before "version" or a bound in a sentence: "..., but version >= 0.15.1 is
                        # required", "please upgrade to >= 4.49.0"
                        "but", "to", "is", "of", "for", "with", "than", "at", "least", "be", "use", "using", "upgrade",
                        "update", "install", "need", "needs", "your", "you", "its", "in", "on", "from", "as", "so", "not",
                        "should", "must", "newer", "older", "higher", "lower", "later", "greater"})
_NAME = r"(?P<name>" + _PKG + r")"
"""A package the general phrasings read, in every phrasing directly followed by a bound, "version" or
a version; never one of `_NOT_NAMES`, words of the sentence around it ("this model requires version
>= 4.5", "minimum version 3.8 or higher"), checked after the match (a look-ahead at every word start
costs more than the whole phrasing)."""
_FOUND = (r"(?:[,;.]?\s{1,2}\(?(?:but\s|while\s|and\s)?(?:[Yy]ou\s(?:have|are\s(?:running|using))|[Ff]ound|[Gg]ot|[Dd]etected|"
          r"(?:[Yy]our\s|[Tt]he\s)?(?:installed|current)\sversion(?:\sis)?:?)\s(?:" + _PKG + r"(?:\s|==))?(?:version\s)?"
          r"(?P<found>" + _VER + r"))?")
"""The found side that may follow a general statement, in one place: ", but found 4.51.3", "you have
4.51.3", "(found 4.51.3)", "installed version is 4.51.3", "current version: 4.51.3", "got 4.51.3",
"You are running version 3.16.3"."""


def _name(text: str) -> str:
    low = text.lower().strip("`'\"")
    if low.endswith("-g++") or low.endswith("-gcc"):
        low = "gcc"
    return _NAMES.get(low, canonicalize_name(low))


def _spec(text: str) -> str:
    text = text.strip().rstrip(".,;")
    if text.endswith(".x"):
        return f"=={text[:-2]}.*"
    if text[:1].isdigit():
        return f"=={text}"
    return text.replace(" ", "")


def _major(text: str) -> str:
    return f"=={text.split('.')[0]}.*"


def _minor_series(text: str) -> str:
    parts = text.split(".")
    return f"=={'.'.join(parts[:2])}.*" if len(parts) > 1 else _major(text)


def _bumped(text: str) -> str:
    """The first version past a series: 3.20 -> 3.21 (for "3.20.x or lower")."""
    parts = text.split(".")
    return ".".join(parts[:-1] + [str(int(parts[-1]) + 1)])


def _cudnn(number: str) -> str:
    """cuDNN's integer version: 7102 -> 7.1.2, 90100 -> 9.1.0."""
    n = int(number)
    if n >= 10_000:
        return f"{n // 10_000}.{n % 10_000 // 100}.{n % 100}"
    return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def _cuda_int(number: str) -> str:
    """A CUDA version as the driver API writes it, 1000 * major + 10 * minor: 11040 -> 11.4, 9000 -> 9.0."""
    n = int(number)
    return f"{n // 1000}.{n % 1000 // 10}"


def _sm(arch: str) -> str:
    """sm_120 -> 12.0, sm_90 -> 9.0."""
    digits = arch.split("_", 1)[1]
    return f"{digits[:-1]}.{digits[-1]}"


Read = Callable[[re.Match[str]], Iterator[StatedVersion]]


@dataclass(frozen=True)
class Phrasing:
    id: str
    """A stable name for the wording (tests and the JSON name it)."""
    source: str
    """The regular expression, compiled on first use (`pattern`)."""
    read: Read
    general: bool = False
    """A general wording (a bound after "requires", before "is required"...): it adds only a
    (subject, bound) that no specific phrasing read, since those read more (who needs it)."""
    flags: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        compiled = _COMPILED.get(self.id)
        if compiled is None:
            compiled = _COMPILED[self.id] = re.compile(self.source, self.flags)
        return compiled

    def may_match(self, text: str) -> bool:
        """False when `text` holds none of the literals every match holds (GATES): the pattern is then neither
        compiled nor run. Compiling the whole table cost 4% of `compat explain` on a pasted log."""
        return any(literal in text for literal in GATES[self.id])


_COMPILED: dict[str, re.Pattern[str]] = {}

GATES: dict[str, tuple[str, ...]] = {
    'symbol-version-not-found': ("' not found",),
    'numpy-abi': ('compiled using NumPy ',),
    'require-version': (' is required',),
    'pip-requires-but-you-have': (', but you have ',),
    'requires-but-found': ('require',),
    'two-cuda-builds': (' has CUDA',),
    'ray-version-mismatch': ('cluster was started with:',),
    'driver-too-old': ('too old (found version ',),
    'built-for': ('built', 'compiled'),
    'extension-cuda-mismatch': (') mismatches the version that was used to compile',),
    'deepspeed-ops-built-for': (' version mismatch! DeepSpeed ops were compiled',),
    'installed-cuda-does-not-match': (' does not match the version torch was compiled with ',),
    'binaries-compiled-with-cuda': ('Pytorch binaries were compiled with Cuda ',),
    'arch-not-in-build': (' is not compatible with the current PyTorch installation',),
    'gpu-too-old-for-torch': ('PyTorch no longer supports this GPU because it is too old',),
    'cudnn-compiled-against': ('PyTorch was compiled',),
    'cudnn-compiled-against-number': ('PyTorch was compiled',),
    'triton-capability': ('Triton only supports devices of CUDA Capability >= ',),
    'capability-at-least': ('only supported on GPUs with compute capability of at least ',),
    'capability-below-unsupported': ('GPUs with compute capability below ',),
    'xformers-built-for': ('xFormers was built for:',),
    'greater-or-equal-detected': (' package version to be greater or equal than ',),
    'requires-version-but-got': ('Requires ',),
    'requires-different-python': ("' requires a different Python: ",),
    'ignored-requires-python': ('require a different python version: ',),
    'pkg-resources-conflict': ("), Requirement.parse('",),
    'depends-on': (' depends on ',),
    'because-depends-on': (' depends on ',),
    'ptx-isa-unsupported': ("; current version is '",),
    'untested-version': (' known to be compatible',),
    'requires-to-function-but-found': (' to function correctly, but ',),
    'distribution-not-found-required-by': ("' distribution was not found and is required by ",),
    'requirement-not-available': (' is not available',),
    'please-install-requirement': ('lease ',),
    'requires-quoted-requirement': ('requires `',),
    'versioned-library-missing': (': cannot open shared object file',),
    'compiler-above-cuda-maximum': (') is greater than the maximum required version by CUDA ',),
    'unsupported-gnu-version': ('unsupported GNU version! gcc versions later than ',),
    'only-on-cuda-and-above': ('is only supported on CUDA ',),
    'python-not-yet-supported': ('+ not yet supported for torch.compile',),
    'not-supported-on-python': (' is not supported on Python ',),
    'downgrade-to-series': ('Downgrade the ',),
    'required-for-this-version-of': (' is required for this version of ',),
    'no-version-satisfies': ('Could not find a version that satisfies the requirement ',),
    'version-greater-than': (' you are using is not compatible, please use a version that is greater than ',),
    'or-higher-but-got': (' or higher, but got ',),
    'cannot-install-on-python': ('Cannot install on Python version ',),
    'minimum-required-not-installed': (' with minimum required version ',),
    'installed-less-than-minimum': (', which is less than the minimum required version ',),
    'your-version-does-not-support': ('required',),
    'not-supported-yet-in': ('supported',),
    'requires-bound': ('equire',),
    'bound-is-required': ('needed', 'required'),
    'minimum-version-is': ('version',),
    'works-on-bound': ('work',),
    'or-higher-is-required': ('required',),
}
"""Each phrasing's required literals: every match holds one of them. They are what
`compat.explain.literals.required_literals` derives from the phrasing's pattern, kept here because the pattern parser
costs more to import than the table costs to compile (tests/explain/test_stated_versions.py checks they agree)."""


def _one(subject: str, wanted: str, found: str | None, change: Change, by: str | None = None) -> Iterator[StatedVersion]:
    yield StatedVersion(subject=subject, wanted=wanted, found=found, by=by, change=change)


def _built_for(m: re.Match[str]) -> Iterator[StatedVersion]:
    """xFormers' record of what it was built for: each pair that differs is a statement."""
    torch, _cuda, have_torch, python, have_python = m.groups()
    if torch != have_torch:
        yield from _one("torch", f"=={torch}", have_torch, Change.ARTEFACT, "xformers")
    if python and have_python and python.split(".")[:2] != have_python.split(".")[:2]:
        yield from _one("python", _minor_series(python), have_python, Change.ARTEFACT, "xformers")


def _ray(m: re.Match[str]) -> Iterator[StatedVersion]:
    ray, python, have_ray, have_python = m.group("ray"), m.group("py"), m.group("have_ray"), m.group("have_py")
    if ray != have_ray:
        yield from _one("ray", f"=={ray}", have_ray, Change.INSTALLED)
    if python and have_python and python.split(".")[:2] != have_python.split(".")[:2]:
        yield from _one("python", _minor_series(python), have_python, Change.INSTALLED, "ray")


def _soname(m: re.Match[str]) -> Iterator[StatedVersion]:
    lib, major = m.group(1), m.group(2)
    subject = "cudnn" if lib == "libcudnn" else "nccl" if lib == "libnccl" else "cuda"
    yield from _one(subject, _major(major), None, Change.ARTEFACT)


def _gcc_range(m: re.Match[str]) -> Iterator[StatedVersion]:
    tool, found, cuda, maximum, bounds = m.groups()
    wanted = bounds.replace(" ", "") if bounds else f"<={maximum}" if maximum else ""
    yield from _one(_name(tool), wanted, found, Change.TOOLKIT, f"cuda {cuda}")


def _untested(m: re.Match[str]) -> Iterator[StatedVersion]:
    pkg, found, known = m.groups()
    single = re.fullmatch(_VER, known)
    yield from _one(_name(pkg), f"=={known}" if single else "", found, Change.INSTALLED)


def _compiled_against(m: re.Match[str]) -> Iterator[StatedVersion]:
    wanted, found = (".".join(m.group(i) for i in (1, 2, 3)), ".".join(m.group(i) for i in (4, 5, 6)))
    yield from _one("cudnn", f"=={wanted}", found, Change.INSTALLED, "torch")


def _glibc(m: re.Match[str]) -> Iterator[StatedVersion]:
    symbol, version, path = m.groups()
    by = (package_of(path) or path) if path else None
    yield from _one(symbol.lower(), f">={version}", None, Change.ARTEFACT, by)


def _p(id: str, pattern: str, read: Read, flags: int = 0) -> Phrasing:
    return Phrasing(id, pattern, read, flags=flags)


def _stated(wanted: Callable[[re.Match[str]], str]) -> Read:
    """The reader of a general phrasing: its package, the bound `wanted` makes and the found side."""
    def read(m: re.Match[str]) -> Iterator[StatedVersion]:
        if m.group("name").lower() not in _NOT_NAMES:
            yield from _one(_name(m.group("name")), wanted(m), m.group("found"), Change.INSTALLED)

    return read


def _general(id: str, pattern: str, wanted: Callable[[re.Match[str]], str]) -> Phrasing:
    return Phrasing(id, pattern + _FOUND, _stated(wanted), general=True)


PHRASINGS: tuple[Phrasing, ...] = (
    # glibc, libstdc++ and the C++ ABI a binary needs: version `GLIBC_2.32' not found (required by /x.so)
    _p("symbol-version-not-found", r"version [`'](GLIBC(?:XX)?|CXXABI)_([\d.]{1,12})' not found(?: \(required by ([^)\n]{1,500})\))?",
       _glibc),
    # A module that was compiled using NumPy 1.x cannot be run in NumPy 2.0.0
    _p("numpy-abi", r"compiled using NumPy (" + _VER + r") cannot be run in\s{1,4}NumPy (" + _VER + r")(?:\s|$|\.\s)",
       lambda m: _one("numpy", _spec(m.group(1)), m.group(2), Change.INSTALLED)),
    # transformers' require_version: tokenizers>=0.19,<0.20 is required for ..., but found tokenizers==0.21.0.
    _p("require-version", r"(" + _PKG + r")\s?(" + _SPEC + r") is required[^,]{0,300}, but found (" + _PKG + r")==(" + _VER
       + r")(?:\.?\s|\.?$)", lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group(4), Change.INSTALLED)),
    # pip: vllm 0.7.2 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible.
    _p("pip-requires-but-you-have", r"(" + _PKG + r") " + _VER + r" requires (" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?){1,6}), "
       r"but you have (" + _PKG + r") (" + _VER + r")(?:\s|$)",
       lambda m: _one(_name(m.group(2)), _spec(m.group(3)), m.group(5), Change.INSTALLED, _name(m.group(1)))),
    # requires torch>=2.4 but found 2.3.1
    _p("requires-but-found", r"requires? (" + _PKG + r") ?(?:version )?((?:[<>=!~]=?\s?)?" + _VER + r"),? "
       r"but (?:found|got|you have|is|installed)(?: version)?:? (?:" + _PKG + r" )?(?:version )?(" + _VER + r")(?:[\s,.;)]|$)",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group(3), Change.INSTALLED)),
    # PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.1
    _p("two-cuda-builds", r"(PyTorch|torch) has CUDA\s{1,4}Version=(" + _VER + r") and "
       r"(" + _PKG + r") has CUDA\s{1,4}Version=(" + _VER + r")",
       lambda m: _one("cuda", _spec(m.group(2)), m.group(4), Change.ARTEFACT, _name(m.group(3)))),
    # Ray: The cluster was started with: Ray: 2.9.0 Python: 3.10.13 ... This process ... was started with: Ray: 2.10.0
    _p("ray-version-mismatch", r"cluster was started with:\s{1,8}Ray: (?P<ray>" + _VER + r")(?:\s{1,8}Ray location: [^\n]{1,300})?"
       r"(?:\s{1,8}Python: (?P<py>" + _VER + r"))?.{0,2000}?was started with:\s{1,8}Ray: (?P<have_ray>" + _VER + r")"
       r"(?:\s{1,8}Ray location: [^\n]{1,300})?(?:\s{1,8}Python: (?P<have_py>" + _VER + r"))?", _ray, re.S),
    # The NVIDIA driver on your system is too old (found version 11040); NVIDIA driver too old (found version 12080)
    _p("driver-too-old", r"driver (?:on your system )?(?:is )?too old \(found version (\d{1,9})\)",
       lambda m: _one("nvidia-driver", "", _cuda_int(m.group(1)), Change.HOST)),
    # built for torch 2.4.0, you have 2.5.1 / compiled against torch 2.4 but ... torch 2.5
    _p("built-for", r"(?:built|compiled) (?:for|against|with|using) (" + _PKG + r") (?:version )?(" + _VER + r")[,;]?\s"
       r"(?:[^.\n]{0,300}?\b(?:you have|found|installed|have|running|but|is)\b)[^\d\n]{0,40}?(" + _VER + r")(?:[\s,.;)]|$)",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group(3), Change.ARTEFACT)),
    # DeepSpeed's prebuilt ops (op_builder/builder.py, 0.8.1 on): PyTorch version mismatch! DeepSpeed ops were compiled and
    # installed with a different version than what is being used at runtime. ... Install torch version=2.1, Runtime torch
    # version=2.2 (the CUDA and HIP twins name those instead)
    _p("deepspeed-ops-built-for", r"(?:PyTorch|CUDA|HIP) version mismatch! DeepSpeed ops were compiled[^\n]{0,300}?\s{1,8}"
       r"[^\n]{0,200}?Install (torch|CUDA|HIP) version=(" + _VER + r"), Runtime (?:torch|CUDA|HIP) version=(" + _VER + r")",
       lambda m: _one(_name(m.group(1)), _minor_series(m.group(2)), m.group(3), Change.ARTEFACT, "deepspeed")),
    # torch.utils.cpp_extension: The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.4).
    _p("extension-cuda-mismatch", r"detected CUDA version \((" + _VER + r")\) mismatches the version that was used to compile\s{1,8}"
       r"PyTorch \((" + _VER + r")\)", lambda m: _one("cuda-toolkit", _minor_series(m.group(2)), m.group(1), Change.TOOLKIT, "torch")),
    # DeepSpeed's op builder: Installed CUDA version 12.3 does not match the version torch was compiled with 12.1
    _p("installed-cuda-does-not-match", r"Installed CUDA version (" + _VER + r") does not match "
       r"the version torch was compiled with (" + _VER + r")",
       lambda m: _one("cuda-toolkit", _minor_series(m.group(2)), m.group(1), Change.TOOLKIT, "torch")),
    # apex: Pytorch binaries were compiled with Cuda 11.8.
    _p("binaries-compiled-with-cuda", r"Pytorch binaries were compiled with Cuda (" + _VER + r")",
       lambda m: _one("cuda-toolkit", _minor_series(m.group(1)), None, Change.TOOLKIT, "torch")),
    # NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
    _p("arch-not-in-build", r"with CUDA capability (sm_\d{2,3}) is not compatible with the current PyTorch installation",
       lambda m: _one("compute-capability", "", _sm(m.group(1)), Change.ARTEFACT, "torch")),
    # Found GPU0 GeForce GT 720 which is of cuda capability 3.5. PyTorch no longer supports this GPU because it is too old.
    # The minimum cuda capability supported by this library is 3.7.
    _p("gpu-too-old-for-torch", r"which is of cuda capability (" + _CC + r")\.?\s{1,8}"
       r"PyTorch no longer supports this GPU because it is too old\."
       r"?(?:\s{1,8}The minimum cuda capability (?:supported by this library|that we support) is (" + _CC + r"))?",
       lambda m: _one("compute-capability", f">={m.group(2)}" if m.group(2) else "", m.group(1), Change.GPU, "torch")),
    # cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but found runtime version (8, 3, 3).
    _p("cudnn-compiled-against", r"PyTorch was compiled\s{1,3}against \((\d{1,2}), (\d{1,2}), (\d{1,2})\) "
       r"but (?:found runtime version|linked against) "
       r"\((\d{1,2}), (\d{1,2}), (\d{1,2})\)", _compiled_against),
    # cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600
    _p("cudnn-compiled-against-number", r"PyTorch was compiled\s{1,3}against (\d{4,6}) but (?:linked|link) against (\d{4,6})",
       lambda m: _one("cudnn", f"=={_cudnn(m.group(1))}", _cudnn(m.group(2)), Change.INSTALLED, "torch")),
    # Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1
    _p("triton-capability", r"Triton only supports devices of CUDA Capability >= (" + _CC + r"), "
       r"but your device is of CUDA capability (" + _CC + r")",
       lambda m: _one("compute-capability", f">={m.group(1)}", m.group(2), Change.GPU, "triton")),
    # vLLM: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.
    _p("capability-at-least", r"only supported on GPUs with compute capability of at least (" + _CC + r")\. "
       r"Your [^\n]{1,100}? GPU has compute "
       r"capability (" + _CC + r")", lambda m: _one("compute-capability", f">={m.group(1)}", m.group(2), Change.GPU)),
    # vLLM: GPUs with compute capability below 7.0 are not supported.
    _p("capability-below-unsupported", r"GPUs with compute capability below (" + _CC + r") are not supported",
       lambda m: _one("compute-capability", f">={m.group(1)}", None, Change.GPU)),
    # xFormers was built for: PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cu118) Python 3.8.18 (you have 3.8.5)
    _p("xformers-built-for", r"xFormers was built for:\s{1,8}PyTorch (" + _VER + r") with CUDA (\d{3,5}) \(you have (" + _VER + r")\)"
       r"(?:\s{1,8}Python\s{1,4}(" + _VER + r") \(you have (" + _VER + r")\))?", _built_for),
    # transformers: you need flash_attn package version to be greater or equal than 2.1.0. Detected version 2.0.4.
    _p("greater-or-equal-detected", r"you need (" + _PKG + r") package version to be greater or equal than (" + _VER + r")\.[^\n]{0,120}?"
       r"[Dd]etected version (" + _VER + r")", lambda m: _one(_name(m.group(1)), f">={m.group(2)}", m.group(3), Change.INSTALLED)),
    # xFormers: Requires Flash-Attention version >=2.7.1,<=2.7.4 but got 2.8.3.
    _p("requires-version-but-got", r"Requires (" + _PKG + r") version (" + _SPEC + r") but got (" + _VER + r")",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group(3), Change.INSTALLED)),
    # pip: ERROR: Package 'click' requires a different Python: 3.9.19 not in '>=3.10'
    _p("requires-different-python", r"Package '([\w.-]{1,100})' requires a different Python: (" + _VER + r") not in '([^'\n]{1,100})'",
       lambda m: _one("python", _spec(m.group(3)), m.group(2), Change.INSTALLED, _name(m.group(1)))),
    # pip: ERROR: Ignored the following versions that require a different python version: 8.2.0 Requires-Python >=3.10
    _p("ignored-requires-python", r"require a different python version: " + _VER + r" Requires-Python ([^;\n]{1,60})",
       lambda m: _one("python", _spec(m.group(1)), None, Change.INSTALLED)),
    # pkg_resources.ContextualVersionConflict: (torch 1.7.1 (/usr/lib/...), Requirement.parse('torch==1.7.0'), {'torchvision'})
    _p("pkg-resources-conflict", r"VersionConflict: \((" + _PKG + r") (" + _VER + r") \([^)\n]{0,300}\), Requirement\.parse\('(" + _PKG
       + r")([^'\n]{1,100})'\)(?:, \{'([\w.-]{1,100})'[^}\n]{0,300}\})?\)",
       lambda m: _one(_name(m.group(3)), _spec(m.group(4)), m.group(2), Change.INSTALLED, _name(m.group(5)) if m.group(5) else None)),
    # pip's resolver: xformers 0.0.21 depends on torch==2.0.1
    _p("depends-on", r"(" + _PKG + r") (" + _VER + r") depends on (" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?){1,6})(?=\s|$)",
       lambda m: _one(_name(m.group(3)), _spec(m.group(4)), None, Change.INSTALLED, _name(m.group(1)))),
    # uv: Because vllm>=0.5.4,<=0.6.3.post1 depends on torch==2.4.0 and ...
    _p("because-depends-on", r"Because (" + _PKG + r")(?:\{[^}\n]{0,200}\})?(?:[<>=!~]=?[\w.*+]+,?){0,6} depends on (" + _PKG
       + r")(?:\{[^}\n]{0,200}\})?((?:[<>=!~]=?[\w.*+]+,?){1,6})",
       lambda m: _one(_name(m.group(2)), _spec(m.group(3)), None, Change.INSTALLED, _name(m.group(1)))),
    # ptxas: fatal : Unsupported .version 8.8; current version is '8.7'
    _p("ptx-isa-unsupported", r"Unsupported \.version (\d{1,2}\.\d{1,2}); current version is '(\d{1,2}\.\d{1,2})'",
       lambda m: _one("ptx-isa", f">={m.group(1)}", m.group(2), Change.TOOLKIT, "ptxas")),
    # DeepSpeed: [WARNING] using untested triton version (2.0.0), only 1.0.0 is known to be compatible
    _p("untested-version", r"using untested (" + _PKG + r") version \((" + _VER + r")\), "
       r"only ([^\n]{1,80}?) (?:is|are) known to be compatible",
       _untested),
    # diffusers: `diffusers` requires transformers >= 4.25.1 to function correctly, but 4.21.0 was found in your environment.
    _p("requires-to-function-but-found", r"requires (" + _PKG + r") ?((?:[<>=!~]=?\s?)" + _VER + r") to function correctly, "
       r"but (" + _VER + r") was found", lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group(3), Change.INSTALLED)),
    # pkg_resources: The 'transformers<4.45,>=4.33' distribution was not found and is required by ms-swift
    _p("distribution-not-found-required-by", r"The '(" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?){1,6})' distribution was not found "
       r"and is required by (" + _PKG + r")", lambda m: _one(_name(m.group(1)), _spec(m.group(2)), None, Change.INSTALLED,
                                                            None if m.group(3) == "the" else _name(m.group(3)))),
    # transformers' Trainer: You have set `use_liger_kernel` to `True` but liger-kernel >= 0.3.0 is not available.
    _p("requirement-not-available", r"(" + _PKG + r") ?((?:[<>]=?|==|~=)\s?" + _VER + r") is not available",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), None, Change.INSTALLED)),
    # vLLM: Please install bitsandbytes>=0.45.0 via `pip install bitsandbytes>=0.45.0` to use bitsandbytes quantizer.
    _p("please-install-requirement", r"[Pp]lease (?:install|upgrade|update)(?: to)? `?(" + _PKG + r") ?((?:[<>]=?|==|~=)\s?" + _VER
       + r"(?:,\s?(?:[<>!]=?|==)\s?" + _VER + r"){0,3})" + _FOUND,
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), m.group("found"), Change.INSTALLED) if m.group(1).lower() not in _NOT_NAMES
       else iter(())),
    # transformers: Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`: Please run ...
    _p("requires-quoted-requirement", r"requires `(" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?){1,6})`",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), None, Change.INSTALLED)),
    # ImportError: libcudart.so.12: cannot open shared object file: No such file or directory
    _p("versioned-library-missing", r"(libcudart|libcublas(?:Lt)?|libcudnn|libnccl|libnvrtc|libcufft|libcusparse|libcusolver|libnvJitLink)"
       r"\.so\.(\d{1,2})(?:\.\d{1,2}){0,2}: cannot open shared object file", _soname),
    # torch.utils.cpp_extension: The current installed version of g++ (12.2.1) is greater than the maximum required version by
    # CUDA 11.7 (11.5.0). Please make sure to use an adequate version of g++ (>=6.0.0, <=11.5.0).
    _p("compiler-above-cuda-maximum", r"current installed version of ([\w.+-]{1,40}) \((" + _VER + r")\) "
       r"is greater than the maximum required version by CUDA (" + _VER + r")(?: \((" + _VER + r")\))?"
       r"[^\n(]{0,120}(?:\(((?:[<>=]=?\s?" + _VER + r",?\s?){1,2})\))?", _gcc_range),
    # nvcc: #error -- unsupported GNU version! gcc versions later than 6 are not supported!
    _p("unsupported-gnu-version", r"unsupported GNU version! gcc versions later than (\d{1,2}) are not supported",
       lambda m: _one("gcc", f"<{int(m.group(1)) + 1}", None, Change.TOOLKIT, "cuda-toolkit")),
    # flash-attn's setup.py: FlashAttention is only supported on CUDA 11.6 and above.
    _p("only-on-cuda-and-above", r"is only supported on CUDA (" + _VER + r") and above",
       lambda m: _one("cuda-toolkit", f">={m.group(1)}", None, Change.TOOLKIT)),
    # torch 2.0: RuntimeError: Python 3.11+ not yet supported for torch.compile
    _p("python-not-yet-supported", r"Python (\d\.\d{1,2})\+ not yet supported for torch\.compile",
       lambda m: _one("python", f"<{m.group(1)}", None, Change.ARTEFACT, "torch")),
    # torch 2.2: Dynamo is not supported on Python 3.12+ / torch.compile is not supported on Python 3.14+
    _p("not-supported-on-python", r"(?:Dynamo|torch\.compile) is not supported on Python (\d\.\d{1,2})\+",
       lambda m: _one("python", f"<{m.group(1)}", None, Change.ARTEFACT, "torch")),
    # protobuf: 1. Downgrade the protobuf package to 3.20.x or lower.
    _p("downgrade-to-series", r"Downgrade the (" + _PKG + r") package to (\d{1,3}(?:\.\d{1,4}){0,2})\.x or lower",
       lambda m: _one(_name(m.group(1)), f"<{_bumped(m.group(2))}", None, Change.INSTALLED)),
    # SciPy: A NumPy version >=1.22.4 and <2.3.0 is required for this version of SciPy (detected version 2.3.4)
    _p("required-for-this-version-of", r"A (" + _PKG + r") version (>=\s?" + _VER + r") and (<\s?" + _VER + r") "
       r"is required for this version of (" + _PKG + r") \(detected version (" + _VER + r")",
       lambda m: _one(_name(m.group(1)), f"{m.group(2)},{m.group(3)}".replace(" ", ""), m.group(5), Change.INSTALLED, _name(m.group(4)))),
    # pip: ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu118 (from versions: ...)
    _p("no-version-satisfies", r"Could not find a version that satisfies the requirement (" + _PKG + r")((?:[<>=!~]=?[\w.*+]+,?){1,6})",
       lambda m: _one(_name(m.group(1)), _spec(m.group(2)), None, Change.INSTALLED)),
    # transformers: The version of PEFT you are using is not compatible, please use a version that is greater than 0.5.0
    _p("version-greater-than", r"The version of ([\w-]{2,40}) you are using is not compatible, please use a version that is greater than ("
       + _VER + r")", lambda m: _one(_name(m.group(1)), f">{m.group(2)}", None, Change.INSTALLED)),
    # triton (Windows build): Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8
    _p("or-higher-but-got", r"only supports? (" + _PKG + r") (" + _VER + r") or higher, "
       r"but got (?:" + _PKG + r" )?version:? (" + _VER + r")",
       lambda m: _one(_name(m.group(1)), f">={m.group(2)}", m.group(3), Change.INSTALLED)),
    # numba's and llvmlite's setup.py: RuntimeError: Cannot install on Python version 3.13.0; only versions >=3.9,<3.13 are supported.
    _p("cannot-install-on-python", r"Cannot install on Python version (" + _VER + r"); only versions ((?:[<>=!~]=?[\w.*+]+,?){1,4}) "
       r"are supported", lambda m: _one("python", _spec(m.group(2)), m.group(1), Change.INSTALLED)),
    # sglang's assert_pkg_version: flashinfer_python with minimum required version 0.2.5 is not installed. / sgl-kernel is
    # installed with version 0.0.9.post2, which is less than the minimum required version 0.1.1.
    _p("minimum-required-not-installed", r"(" + _PKG + r") with minimum required version (" + _VER + r") is not installed",
       lambda m: _one(_name(m.group(1)), f">={m.group(2)}", None, Change.INSTALLED)),
    _p("installed-less-than-minimum", r"(" + _PKG + r") is installed with version (" + _VER + r"), which is less than the minimum "
       r"required version (" + _VER + r")", lambda m: _one(_name(m.group(1)), f">={m.group(3)}", m.group(2), Change.INSTALLED)),
    # unsloth: Unsloth: Your transformers version of 4.57.6 does not support Qwen3.5. The minimum required version is 5.2.0.
    # (its loader and model modules print it for every model they gate, the minimum often on the next line)
    _p("your-version-does-not-support", r"[Yy]our\s(" + _PKG + r")\sversion\s(?:of\s|is\s)?(" + _VER + r")\sdoes\snot\ssupport\b"
       r"[^\n]{0,200}(?:\n[^\n]{0,200})?[Tt]he\sminimum\srequired\sversion\sis\s(" + _DOTTED + r")",
       lambda m: _one(_name(m.group(1)), f">={m.group(3)}", m.group(2), Change.INSTALLED)),
    # unsloth's loader: ValueError: `unsloth/Qwen3.5-0.8B` is not supported yet in `transformers==4.57.6`. ("yet": a later
    # release of the named package is what supports it)
    _p("not-supported-yet-in", r"is\snot\ssupported\syet\sin\s`?(" + _PKG + r")==(" + _VER + r")",
       lambda m: _one(_name(m.group(1)), f">{m.group(2)}", m.group(2), Change.INSTALLED)),
    # The general wordings of a requirement, each with an optional found side (`_FOUND`); last, so that
    # a specific phrasing of the same words reads them first.
    # accelerate: ValueError: FSDP requires PyTorch >= 2.1.0 / transformers: 4 bit quantization requires bitsandbytes>=0.39.0
    _general("requires-bound", r"(?<![Yy]ou )\b[Rr]equires?\s(?:the\s)?(?:package\s)?`?" + _NAME + r"\s?(?:version\s?)?"
             r"(?P<spec>" + _BOUND + r")", lambda m: _spec(m.group("spec"))),
    # transformers: Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1
    _general("bound-is-required", _NAME + r"\s?(?:version\s?)?(?P<spec>" + _BOUND + r")\s(?:is\s|are\s)?(?:required|needed)\b",
             lambda m: _spec(m.group("spec"))),
    # get-pip: ERROR: This script does not work on Python 3.8. The minimum supported Python version is 3.9.
    _general("minimum-version-is", r"\b[Mm]inimum\s(?:supported\s|required\s)?" + _NAME + r"\s{1,4}version\sis\s(?P<ver>" + _DOTTED + r")",
             lambda m: f">={m.group('ver')}"),
    # unsloth: RuntimeError: Unsloth: Cohere's Command model only works on transformers >= 4.50.0.
    _general("works-on-bound", r"\bworks?\s(?:only\s)?(?:on|with)\s`?" + _NAME + r"\s?(?:version\s?)?(?P<spec>" + _BOUND + r")",
             lambda m: _spec(m.group("spec"))),
    # CMake: CMake 3.18 or higher is required.  You are running version 3.16.3
    _general("or-higher-is-required", _NAME + r"\s(?:version\s)?(?P<ver>" + _DOTTED + r")(?:\sor\s(?:higher|newer|later|above|"
             r"greater)|\+)\s(?:is\s)?required\b", lambda m: f">={m.group('ver')}"),
)


def stated_versions(text: str) -> tuple[StatedVersion, ...]:
    """The mismatches `text` states, in the order of the table, each once."""
    out: list[StatedVersion] = []
    seen: set[tuple[str, str, str | None]] = set()
    bounds: set[tuple[str, str]] = set()
    for phrasing in PHRASINGS:
        if not phrasing.may_match(text):
            continue
        for m in phrasing.pattern.finditer(text):
            said = m.group(0).strip()
            for sv in phrasing.read(m):
                if (sv.wanted and unreadable_version(sv.wanted)) or (sv.found is not None and unreadable_version(sv.found)):
                    continue  # a number no version has: not a statement compat can check
                key = (sv.subject, sv.wanted, sv.found)
                if key in seen or (phrasing.general and (sv.subject, sv.wanted) in bounds):
                    continue
                seen.add(key)
                bounds.add((sv.subject, sv.wanted))
                out.append(replace(sv, phrasing=phrasing.id, text=said))
    return tuple(out)


def check(stated: StatedVersion, facts: Facts | None) -> StatedVersion:
    """`stated` with what the facts say of its subject, the side to change decided and its command."""
    installed = _installed(stated.subject, facts) if facts is not None else None
    if installed is None:
        return replace(stated, command=_command(stated, facts))
    satisfied = _satisfies(installed, stated.wanted)
    change = stated.change
    if stated.subject in ("glibc", "glibcxx", "cxxabi"):
        # The host's C and C++ libraries are not something to upgrade in place: the binary must change.
        change = Change.ARTEFACT
    # Already satisfied: the message comes from another environment, and the command is for that one, not this interpreter.
    command = _command(stated, None if satisfied else facts)
    return replace(stated, installed=installed, satisfied=satisfied, change=change, command=command)


def _command(stated: StatedVersion, facts: Facts | None) -> str | None:
    if stated.change is not Change.INSTALLED or stated.subject in HOST_SUBJECTS or not stated.wanted:
        return None
    python = facts.python.executable if facts is not None else None
    argv = pip_command(Installer.PIP, python if isinstance(python, str) else None, "install", [f"{stated.subject}{stated.wanted}"])
    return shlex.join(argv)


def _installed(subject: str, facts: Facts) -> str | None:
    value: object = None
    if subject == "glibc":
        value = facts.python.glibc
    elif subject == "python":
        value = facts.python.version
    elif subject == "nvidia-driver":
        value = facts.hardware.driver
    elif subject == "cuda":
        torch = facts.torch
        value = torch.cuda if torch is not None and not isinstance(torch, Unknown) else facts.hardware.driver_cuda
    elif subject in ("cuda-toolkit", "gcc") and not isinstance(facts.system, Unknown):
        system = facts.system
        value = system.cuda_toolkit if subject == "cuda-toolkit" else next((t.version for t in system.tools if t.name == "gcc"), None)
    elif subject == "compute-capability":
        gpus = facts.hardware.gpus
        caps = [g.compute_capability for g in gpus if isinstance(g.compute_capability, str)] if not isinstance(gpus, Unknown) else []
        value = min(caps, key=Version) if caps else None
    elif subject not in HOST_SUBJECTS:
        dist = facts.package(subject)
        value = dist.version if dist is not None and not isinstance(dist, Unknown) else None
    return value if isinstance(value, str) else None


def _satisfies(version: str, wanted: str) -> bool | None:
    if not wanted:
        return None
    try:
        return SpecifierSet(wanted).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None
