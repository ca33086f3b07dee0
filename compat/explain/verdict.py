"""Four verdicts, never blurred: a known environment failure, a configuration mistake the catalog
names, an environment failure compat cannot name, or not an environment failure.

An error is known when a root-cause signature of the catalog matched it, the API timeline answered
it, or its message states a version mismatch the facts do not contradict; it is `known-usage` when
every signature that matched it names a mistake in the user's configuration, data or code.
Otherwise its text, its exception type and the frames that raised it say whether it is about the
environment at all (`Clue`): an import that failed, a binary that does not load, a CUDA/driver or
NCCL error, a stated version mismatch, an API that is not where the caller expects it, or an
import/attribute/type error raised inside an installed package. `not-environment` needs evidence
too: the raising frame in the user's own code, or an error type that speaks of data or logic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

from compat.explain.drift import questions
from compat.explain.owners import CALLED_BY_PATH
from compat.explain.roots import ErrorKind, Frame, Raised
from compat.explain.stated import StatedVersion
from compat.timeline.records import ApiAnswer, Drift, Missing


class ErrorVerdict(str, Enum):
    """What compat can say about one error, most serious first."""

    KNOWN = "known"
    """A known environment failure: the catalog names it and its fix."""
    KNOWN_USAGE = "known-usage"
    """A configuration, data or code mistake the catalog names, with its fix: not the environment."""
    UNKNOWN_ENVIRONMENT = "unknown-environment"
    """An environment failure whose cause compat cannot name."""
    NOT_ENVIRONMENT = "not-environment"
    """Not an environment failure compat recognises (often a bug in the program itself)."""


SERIOUSNESS = (ErrorVerdict.KNOWN, ErrorVerdict.KNOWN_USAGE, ErrorVerdict.UNKNOWN_ENVIRONMENT, ErrorVerdict.NOT_ENVIRONMENT)
"""The whole answer takes the first of these that any of its root errors has: a named cause first."""


class Clue(str, Enum):
    """Why an unnamed error is about the environment."""

    IMPORT = "import"
    """A module failed to import."""
    BINARY = "binary"
    """A compiled extension or shared library does not load (symbols, glibc, missing .so)."""
    CUDA = "cuda"
    """A CUDA, driver, cuBLAS/cuDNN or kernel-image error."""
    NCCL = "nccl"
    """An NCCL or process-group error."""
    VERSION = "version"
    """The message states a version mismatch, or tells the user to update a named package (`Please update
    transformers via pip install --upgrade transformers`, `not supported in your current Unsloth version`)."""
    API = "api"
    """A library's API is not what its caller expects (a missing attribute or argument)."""
    LIBRARY = "library"
    """An error raised inside an installed package's own frames whose type does not speak of data or
    logic (an import, attribute, type or runtime error): the package and what it was combined with."""
    MISSING = "missing"
    """The message says a package, library or backend the code needs is not installed (`PEFT backend is required for
    this method`, `Ray is not installed`, `please install FlashInfer`), whatever the exception's type, where a package
    raised it or no frame shows who did."""
    NATIVE = "native"
    """The message is a C++ standard library's exception that a compiled extension let through (`IndexError: map::at`
    from Triton's compiler, `std::bad_alloc`, `vector::_M_range_check`): the extension's own code failed, whatever Python
    type the binding gave it, not a check of the program's data."""
    REGISTRY = "registry"
    """An installed package's own registry refuses a name the program asks it for (`FunASRNano is not registered`,
    `Unrecognized configuration class ... for this kind of AutoModel`, `model type ... is not supported`), whatever the
    exception's type: the release may be older than the model or backend asked of it."""


_CLUES: tuple[tuple[Clue, re.Pattern[str]], ...] = (
    (Clue.BINARY, re.compile(r"undefined symbol|cannot open shared object file|GLIBC(?:XX)?_[\d.]+' not found|wrong ELF class|"
                             r"invalid ELF header|DLL load failed|\.so(?:\.\d+)*: cannot|image not found|incompatible architecture|"
                             r"binary incompatibility")),
    (Clue.NATIVE, re.compile(r"\b(?:unordered_map|map|vector|deque|array|basic_string|string)::(?:at|_M_range_check|_M_construct|substr)\b|"
                             r"\bstd::(?:bad_alloc|out_of_range|length_error|bad_variant_access|bad_optional_access|bad_function_call|"
                             r"bad_array_new_length|system_error|future_error)\b")),
    (Clue.IMPORT, re.compile(r"^(?:ImportError|ModuleNotFoundError)\b|No module named |cannot import name ")),
    # transformers looking up the class a checkpoint's config names: a registry, whoever printed it
    (Clue.REGISTRY, re.compile(r"does not exist or is not currently imported|Could not find \w+ neither in ")),
    (Clue.CUDA, re.compile(r"CUDA error|CUDA driver|cudaError|CUDA_ERROR|CUBLAS_STATUS|CUDNN_STATUS|cuDNN error|no kernel image|"
                           r"NVIDIA driver|NVML|nvrtc|CUDA runtime|Found no NVIDIA driver|CUDA initialization|cudaGetDevice")),
    (Clue.NCCL, re.compile(r"NCCL|ProcessGroupNCCL|Watchdog caught|DistBackendError|c10d")),
    (Clue.VERSION, re.compile(r"[Vv]ersion mismatch|incompatible with|not compatible with|(?:built|compiled) (?:for|against|with) |"
                              r"requires? [\w.-]+ ?(?:version )?[<>=~]|is not supported (?:by|on|in) (?:this|your)|"
                              r"not supported (?:yet )?in (?:your current [\w.-]+ version|`?[\w.-]+==)|"
                              r"[Pp]lease (?:update|upgrade) (?:your )?`?[\w.-]+`? ?(?:version\b|via\b|with\b|using\b)|"
                              r"version of [\w.-]+ is out of date")),
)
_API_ANYWHERE = re.compile(r"module '[\w.]+' has no attribute|cannot import name |"
                           r"`?model_kwargs`? are not used by the model")
"""Wordings about an API whatever raised them: generate()'s check of the keyword arguments a model's forward takes names
arguments a processor or another library passed (token_type_ids, mm_token_type_ids), not the program's data."""
_API_IN_LIBRARY = re.compile(r"has no attribute '|got an unexpected keyword argument|missing \d+ required positional argument|"
                             r"takes \d+ positional arguments? but \d+ (?:were|was) given")
_REFUSED_NAME = re.compile(r"\bis not registered\b|\bnot registered in\b|\b[Uu]nrecogni[sz]ed (?:model|configuration class)|"
                           r"\b(?:model|architecture|model type|model_type)\b[^\n]{0,60}\b(?:is |are )?not (?:yet )?supported\b|"
                           r"\b[Uu]nsupported (?:model|architecture)\b|\bunknown (?:model|architecture)\b")
"""A package's registry refusing a name (a model, an architecture, a config class) in its own frames."""
_MISSING = re.compile(r"\b(?:backend|library|package) (?:is|are) required\b|\b(?:is|are) not installed\b|"
                      r"\b[Pp]lease install \w|\brequires? the [\w.-]+ (?:library|package|backend)\b|"
                      r"\bNo [\w.-]+ installation (?:was )?found")
"""A package, library or backend said to be missing: raised by a package, or printed with no frame to place it."""
_NONE_OBJECT = re.compile(r"'NoneType' object")
_BUILTIN_OBJECT = re.compile(r"'(?:str|int|float|bool|list|dict|tuple|set|bytes)' object")


def clues(kind: ErrorKind, chain: tuple[Raised, ...], versions: tuple[StatedVersion, ...]) -> tuple[Clue, ...]:
    """Why the error is about the environment, if it is (empty: it does not look so)."""
    found: list[Clue] = []

    def add(clue: Clue) -> None:
        if clue not in found:
            found.append(clue)

    if kind is ErrorKind.NCCL:
        add(Clue.NCCL)
    for raised in chain:
        text = f"{raised.short_type}: {raised.message}" if raised.type else raised.message
        for clue, rx in _CLUES:
            if rx.search(text):
                add(clue)
        api = _API_IN_LIBRARY.search(text) and not _NONE_OBJECT.search(text)
        # With no traceback nothing says which side raised it; a builtin's missing attribute is the program's.
        unplaced = not raised.frames and not _BUILTIN_OBJECT.search(text)
        if _API_ANYWHERE.search(text) or (api and (_raised_in_library(raised) or unplaced)):
            add(Clue.API)
        if _REFUSED_NAME.search(text) and _raised_in_library(raised):
            add(Clue.REGISTRY)
        if _MISSING.search(text) and (raised.raiser is None or raised.raiser.package is not None):
            add(Clue.MISSING)  # the program's own `raise ValueError("Please install the dataset ...")` speaks of its data
    if versions:
        add(Clue.VERSION)
    if _while_importing(chain):
        add(Clue.IMPORT)
    if not found and chain and not _speaks_of_data(chain[0]) and _raised_in_library(chain[0]):
        add(Clue.LIBRARY)  # only when nothing more specific spoke: a clue, not a second opinion
    return tuple(found)


_IMPORTS = re.compile(r"^\s*(?:from\s+[\w.]+\s+)?import\s+[\w.]")
"""A static import statement. Not roots' `_IMPORT_STATEMENT`, which also takes dynamic imports: `importlib` and `exec`
run a dataset's or a model's own script (`load_dataset`, `trust_remote_code`), whose errors may be the data's."""


def _while_importing(chain: tuple[Raised, ...]) -> bool:
    """Whether a package raised it while a module was being imported: a frame of the chain (the program's or a package's
    module body) is on an import statement that ran a module (the next frame is a module body or the interpreter's
    import machinery, or the paste hides the frames after it), and the innermost frame is a package's. Whatever its
    type, an error raised by an import is the installed code's, or what it was combined with: an import passes no data
    of the program's. The package's own module body raising it (`site-packages/x/__init__.py", line 55, in <module>`) is
    such an import too, whatever frames the paste shows above it: a shared library or data file the release looks for
    at import (a FileNotFoundError for a torch/CUDA build it ships no binary for) is the install's, not the program's."""
    root = chain[0].raiser if chain else None
    if root is None or root.package is None:
        return False
    if root.function == "<module>" or _module_body_calls_another_package(chain[0].frames):
        return True
    for raised in chain:
        for frame, after in zip(raised.frames, [*raised.frames[1:], None], strict=True):
            if frame.code is not None and _IMPORTS.match(frame.code) and (after is None or _module_body(after)):
                return True
    return False


def _module_body_calls_another_package(frames: tuple[Frame, ...]) -> bool:
    """A package's module body calling straight into another package (transformers' `hub_kernels.py` building a
    `kernels` registry at its top level): that module was being imported. A module body calling its own package is
    not enough: `python -m pkg.cli` runs a whole program from one."""
    return any(f.package is not None and f.function == "<module>" and g.package not in (None, f.package)
               for f, g in pairwise(frames))


def _module_body(frame: Frame) -> bool:
    """A module's top level running (`in <module>`; IPython prints none), or the import machinery that runs it."""
    return frame.function in (None, "<module>") or frame.file.startswith("<frozen importlib")


_DATA_TYPES = frozenset({
    "KeyError", "IndexError", "ValueError", "ZeroDivisionError", "AssertionError", "FileNotFoundError", "JSONDecodeError",
    "UnicodeDecodeError", "StopIteration", "RecursionError", "DatasetGenerationError", "SchemaInferenceError",
})
"""Errors that speak of the program's data or logic."""


def _speaks_of_data(raised: Raised) -> bool:
    """Whether the exception's type speaks of data or logic. A bare `assert` (no message) inside an installed package
    is that package's own invariant, not a check of the caller's input, which says what it wants: it fails where the
    package meets what another release wrote (vLLM 0.6's `assert "factor" in rope_scaling` on a newer model's config)."""
    if raised.short_type not in _DATA_TYPES:
        return False
    return not (raised.short_type == "AssertionError" and not raised.message.strip() and _raised_in_library(raised))


def not_environment_reason(chain: tuple[Raised, ...]) -> str | None:
    """Why an error with no environment clue is the program's own (where it was raised, or its kind);
    None when nothing says so: no frame of the user's code raised it and its type is not one of data or logic."""
    root = chain[0]
    frame = root.raiser
    if frame is not None and frame.package is None and not root.cut_above_import:
        place = f"{frame.file}:{frame.line}" if frame.line is not None else frame.file
        return f"raised in your own code ({place})"
    if _speaks_of_data(root):
        return f"{root.short_type} is an error of the program's data or logic"
    if frame is None and root.short_type == "TypeError" and _VALUE_TYPE.search(root.message):
        return "a TypeError about the values an operation got (a comparison, an index, arithmetic on None or a str) is the data's"
    if frame is None and root.short_type == "RuntimeError" and _SHAPES.search(root.message):
        return "a RuntimeError about the shapes of the tensors an operation got, printed with no frame, is the data's or the model's"
    return _frameless_placement_reason(root)


_VALUE_TYPE = re.compile(r"not supported between instances of|string indices must be integers|unsupported operand type\(s\)|"
                         r"can only concatenate \w+ \(not|object of type '\w+' has no len\(\)|"
                         r"'NoneType' object is not (?:iterable|subscriptable)|argument of type 'NoneType' is not iterable")
"""TypeError wordings about the values an operation met, not about a callable's signature or a library's API: with no
frame printed, nothing places them in a package, and they speak of the program's data (`'>' not supported between
instances of 'int' and 'NoneType'`, a None iterated or indexed: elb3k/vtn#2's corrupted data, apryor6/flask_api_example#1's
and clvrai/SSGAN-Tensorflow#26's own code). Raised in a package's frame they stay a suspect of the environment."""


_SHAPES = re.compile(r"^(?:shape mismatch: value tensor of shape|mat1 and mat2 shapes cannot be multiplied|The size of tensor a \(\d+\) "
                     r"must match the size of tensor b|shape '\[[\d, -]*\]' is invalid for input of size)")
"""torch's reports of the shapes one operation was given (an indexing assignment, a matmul, a broadcast, a view): with no
frame printed nothing places them in a package, and they speak of the batch, the labels or the model's configured sizes
(an index assignment of more values than positions, a classifier's input size, a view of the wrong length).
Raised in a package's frame (a modeling file's rotary embedding against a checkpoint of another release) they stay a
suspect of the environment."""


def timeline_decides(drift: ApiAnswer, chain: tuple[Raised, ...]) -> bool:
    """Whether the API timeline's answer settles the error: a side too old or too new, or a name no release had that
    is a slip of one a release has, or that the user's own code asks for. A name no release had, asked for by nobody
    the log shows and like no released name, is a development build's as often as a typo: it settles nothing."""
    if drift.drift is not Drift.NEVER:
        return drift.decided
    frame = chain[0].raiser if chain else None
    users = frame is None or frame.package is None
    return (drift.typo_of is not None or (frame is not None and frame.package is None) or drift.unreleased
            or (drift.home_of is not None and users))


def _raised_in_library(raised: Raised) -> bool:
    frame = raised.raiser
    return frame is not None and frame.package is not None


@dataclass(frozen=True, kw_only=True)
class PackageSeen:
    name: str
    """A package whose files are in the error's frames, innermost first."""
    version: str | None
    """Its installed version from the facts; None when not known (no facts, or not installed)."""


def decide(
    chain: tuple[Raised, ...], root_ids: list[str], usage: set[str], drift: ApiAnswer | None,
    versions: tuple[StatedVersion, ...], found: tuple[Clue, ...],
) -> tuple[ErrorVerdict, tuple[str, ...]]:
    """The verdict of one error and the evidence it rests on, strongest source first."""
    if root_ids and all(sid in usage for sid in root_ids):
        return ErrorVerdict.KNOWN_USAGE, tuple(f"the catalog's {sid} names a configuration mistake" for sid in root_ids)
    if root_ids:  # a curated signature ranks first; the API answer only adds to it
        return ErrorVerdict.KNOWN, tuple(f"the catalog's {sid} matched it" for sid in root_ids if sid not in usage)
    if drift is not None and drift.drift in (Drift.CALLEE_TOO_NEW, Drift.CALLEE_TOO_OLD, Drift.OVERRIDE):
        return ErrorVerdict.KNOWN, (f"the API timeline: {drift.drift.value}",)
    stated = [v for v in versions if _names_a_side(v)]
    if stated:  # the message states both sides
        return ErrorVerdict.KNOWN, tuple(f"it states {v.subject}{v.wanted or ''}" + (f", found {v.found}" if v.found else "")
                                         for v in stated)
    if drift is not None and drift.unreleased:
        return ErrorVerdict.KNOWN, (f"the API timeline: no {drift.package} release has it and {drift.caller} asks for it",)
    if drift is not None and drift.drift is Drift.NEVER and timeline_decides(drift, chain):
        why = (f"no {drift.package} release ever had it and {drift.typo_of} is one slip away: a typo" if drift.typo_of else
               f"no {drift.package} release ever had it; {drift.home_of.replace(':', ' exports ')}: the import names the wrong "
               f"package" if drift.home_of else
               f"no {drift.package} release ever had it and your own code asks for it: the program's own name")
        return ErrorVerdict.NOT_ENVIRONMENT, (why,)
    if (boundary := _call_into_package(drift)) is not None:
        return ErrorVerdict.UNKNOWN_ENVIRONMENT, (boundary,)
    if drift is None and (written := _call_written_into_package(chain[0])) is not None:
        return ErrorVerdict.UNKNOWN_ENVIRONMENT, (written,)
    kernel = _kernel_assert_reason(chain[0], found)
    if kernel is not None:
        return ErrorVerdict.NOT_ENVIRONMENT, (kernel,)
    if found:
        return ErrorVerdict.UNKNOWN_ENVIRONMENT, tuple(f"clue: {c.value}" for c in found)
    reason = not_environment_reason(chain)
    if reason is None:  # calling it the user's bug needs evidence; without any, the environment stays a suspect
        return ErrorVerdict.UNKNOWN_ENVIRONMENT, ("no frame of your code raised it and its type is not one of data or logic",)
    return ErrorVerdict.NOT_ENVIRONMENT, (reason,)


_CALLS = frozenset({Missing.KEYWORD, Missing.POSITIONAL, Missing.POSITIONAL_COUNT})


def _call_into_package(drift: ApiAnswer | None) -> str | None:
    """Why a call the timeline placed in a package but could not decide is the environment's suspect: releases of the
    callee take the argument by name, so which release the program runs against decides, wherever the call is written
    (the call's line is the program's own: Python raises a refused call there, before the callee runs)."""
    if drift is None or drift.drift is not Drift.UNDECIDED or not drift.present or drift.question.missing not in _CALLS:
        return None
    spans = ", ".join(f"{s.first} - {s.last}" if s.first != s.last else s.first for s in drift.present)
    return f"the call goes into {drift.package}'s {drift.key} ({spans} take it): the release the program runs against decides"


def _call_written_into_package(root: Raised) -> str | None:
    """Why a refused call written by a package's path (`xformers.ops.memory_efficient_attention(q, k, v, attn_bias=...)`)
    is the environment's suspect where the API index gives no answer for the callee: a keyword or an argument
    count that one release takes and another refuses is what drift looks like, and nothing here tells it from a slip."""
    raiser = root.raiser
    for q in questions(root):
        top, dot, _ = (q.module or "").partition(".")
        if q.missing in _CALLS and dot and top in CALLED_BY_PATH and (raiser is None or raiser.package != top):
            return (f"the call goes into {top} ({q.module}), which the API index cannot place: the {top} release the "
                    "program runs against decides")
    return None


def _names_a_side(v: StatedVersion) -> bool:
    """A stated mismatch explain can answer: a bound or a found version. One the installed version already satisfies
    comes from another environment (or from before an upgrade): it names the side to change there all the same."""
    return bool(v.wanted or v.found)


def _frameless_placement_reason(root: Raised) -> str | None:
    """A device mismatch printed with no frame: torch's report of the tensors one operation was given. Where a
    library's frames show, or a catalog entry names the library (trl's reference model left on the CPU), it is not
    this; alone, it is the placement the program made, what the threads it comes from fixed in their own code."""
    if root.raiser is not None or root.short_type != "RuntimeError" or not _PLACEMENT.search(root.message):
        return None
    return "a RuntimeError about where the tensors of one operation are (two devices), printed with no frame, is the program's placement"


_PLACEMENT = re.compile(r"Expected all tensors to be on the same device, but found at least two devices")
"""torch's device check on an operation's inputs (`cuda:0 and cpu!`, `(when checking argument for argument index in
method wrapper__index_select)`)."""


def _kernel_assert_reason(root: Raised, found: tuple[Clue, ...]) -> str | None:
    """A CUDA device-side assert that no catalog entry explained: a kernel's own bounds check (a class label or token id
    outside the table) fired on the values the program fed it. The entries that name an environment cause of the same
    echo (a GPU the torch build has no code for) match first; with none, the data is what the assert checked (issue 23:
    the threads behind cuda-device-side-assert-echo fixed labels and vocabularies, not installs). Torch's frames and the
    message's own "CUDA error" wording are no clue of anything else; any other clue keeps the environment a suspect."""
    if any(c not in (Clue.LIBRARY, Clue.CUDA) for c in found):
        return None
    if root.short_type not in ("RuntimeError", "AcceleratorError") or "device-side assert triggered" not in root.message:
        return None
    return "a CUDA device-side assert is a kernel's bounds check on the program's values (labels, token ids) firing"

