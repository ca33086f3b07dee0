"""A log split into the errors it reports: Python tracebacks with their chains, C++/CUDA errors,
NCCL reports, launcher summaries, and stray error lines.

The scanner hands over only the structural lines (a traceback's header, its frames, the exception
line and the few lines after it, chain markers, `terminate called ...`/`what():`, NCCL WARN and
watchdog lines), in order; `ErrorBuilder` reads them per stream (each rank's lines on their own, so
eight interleaved tracebacks stay eight) into `Raised` records joined into chains, innermost first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cache

from compat.explain.normalize import body, clean, masked, stream
from compat.explain.owners import folder_package, package_of, stack_folder
from compat.explain.reported import reported_version
from compat.explain.shapes import BARE_CALL, BARE_MEMBER, BARE_WRAPPER, type_of

MAX_ERRORS = 200
"""Distinct errors kept; more of them are counted, not listed (bounded memory on any log)."""

MAX_FOLLOWING = 4
"""Lines after an exception line read as the rest of its message (wrapped or multi-line)."""

_REPORTED_KEPT = 500
"""Packages whose reported version is kept (a `pip freeze` lists a few hundred)."""

_FRAMES_KEPT = 30
"""Frames kept per exception, innermost last (a recursion prints thousands)."""


class Event(str, Enum):
    """The structural lines the scanner looks for, with the pattern that finds each."""

    # Literal-led and short: each one costs the automaton on every byte of every log.
    TRACEBACK = r"Traceback \(most recent call last\)"
    FRAME = (r"File \"[^\"\n]+\", line \d+|File (?:[/~]|[A-Za-z]:\\)[^\s:\"]+\.py:\d+|Cell In\[\d+\], line \d+|"
             r"\.py\]\([^)\s]*\) in [\w<]|\.py in [\w<]|\.py\", line \d+, in ")
    EXCEPTION = r"(?:Error|Exception|Exit|Interrupt|Failure)(?::|$)"
    CAUSE = r"The above exception was the direct cause"
    CONTEXT = r"During handling of the above exception"
    TERMINATE = r"terminate called after throwing"
    WHAT = r"what\(\):"
    CPP_FRAME = r"frame #\d+: .* in [^)\n]+\)"
    NCCL = r"NCCL WARN |Watchdog caught collective|NCCL error"
    VERSION = (
        r"GLIBC(?:XX)?_[\d.]+' not found|compiled using NumPy|ersion mismatch|has CUDA Version=|"
        r"(?:built|compiled) (?:for|against|with) |, but (?:found|you have) |driver (?:on your system )?(?:is )?too old|"
        r"requires a different Python|Requires-Python |VersionConflict: |depends on [\w.-]+[<>=!~]|Unsupported \.version |"
        r"known to be compatible|cannot open shared object file|maximum required version by CUDA|unsupported GNU version|"
        r"only supported on CUDA |not (?:yet )?supported (?:for torch\.compile|on Python )|Downgrade the [\w.-]+ package|"
        r"is required for this version of|Could not find a version that satisfies|please use a version that is greater|"
        r"mismatches the version that was used|does not match the version torch|Pytorch binaries were compiled|"
        r"not compatible with the current PyTorch|PyTorch no longer supports this GPU|Triton only supports? |"
        r"compute capability (?:of at least|below) |xFormers was built for|Detected version |version [<>=]=?[\d.]+[^\n]{0,40} but got |"
        r"[<>]=? ?\d[\w.+-]{0,30} \(found v?\d"
    )
    CHOICE = r"error: argument [^:\n]*: invalid choice: '"
    """An argparse program refusing a subcommand or option value (`trl: error: argument command: invalid choice`)."""
    REPORTED = r"ersion: {0,4}`?v?\d|==\d"
    """A version an environment report or `pip freeze` states (`- vLLM version: 0.5.0`, `trl==0.12.0`), read by
    compat/explain/reported.py for the API timeline's answers."""
    IMPORT = (r"No module named '|cannot import name '|\.so(?:\.\d+)*: (?:undefined|cannot open shared object)|"
              r"\(\) got an unexpected keyword argument |\(\) takes (?:from \d+ to )?\d+ positional argument|"
              r"\(\) missing \d+ required |' object has no attribute '|because of the following error")
    """An import failure a logger or a paste printed without its exception type (`Failed to import X: No module named
    'y'`, sglang's `Ignore import error when loading ...`, a bare `x.so: undefined symbol: _ZN...`): the import error
    itself, whatever the line around it says. Also a call's TypeError or a member's AttributeError retyped without its
    type (an issue's title or prose: `LoraConfig.__init__() got an unexpected keyword argument 'eva_config'`), read as
    the error it is (compat/explain/shapes.py)."""


class ErrorKind(str, Enum):
    """Where an error comes from."""

    PYTHON = "python"
    """A Python exception (with or without its traceback)."""
    CPP = "c++"
    """A C++ exception: `terminate called after throwing ...` and its `what():`."""
    NCCL = "nccl"
    """An NCCL WARN line or a ProcessGroupNCCL watchdog report."""
    LINE = "line"
    """A line that states an error outside any of the above (a logger's message, a version mismatch)."""


LAUNCHER_TYPES = frozenset({
    "ChildFailedError", "CalledProcessError", "SignalException", "ProcessRaisedException", "ProcessExitedException",
    "RayTaskError", "RayActorError",
})
"""Exceptions a launcher raises when a child failed: they only echo the child's error (torchrun's ChildFailedError,
accelerate's and DeepSpeed's CalledProcessError, torch.multiprocessing.spawn's two, Ray's re-raise in the driver)."""

ECHO_WORDINGS: tuple[tuple[str, str], ...] = (
    ("vLLM V1 engine start-up", r"Engine core initialization failed\. See root cause above"),
    ("vLLM V0 front end", r"Engine process failed to start\. See stack trace for the root cause"),
    ("vLLM V1 executor", r"Worker failed with error '.*', please check the stack trace above for the root cause"),
    ("a subprocess launcher", r"Command '.*' returned non-zero exit status -?\d+"),
    ("DeepSpeed's launcher", r"exits with return code = -?\d+"),
    ("multiprocessing", r"\b[Pp]rocess \d+ terminated with (?:exit code|signal|the following error)|exited with exit ?code -?\d+"),
    ("any program", r"\b(?:[Ss]ee|[Cc]heck) (?:the )?(?:stack ?trace|root cause|error messages?|errors?|traceback|logs?) "
                    r"above"),
)
"""How launchers and engines word an exception that only reports that an error happened elsewhere (another process,
earlier lines): the cause is the error above it, not the wrapper. Matched on the message, whatever the exception's type
(vLLM raises RuntimeError), so a log that ends in one is decided by the errors above it."""
_ECHO = re.compile("|".join(f"(?:{p})" for _, p in ECHO_WORDINGS))


def echoes(raised: Raised) -> bool:
    """Whether an exception only echoes an error reported elsewhere: a launcher's type or an engine's wording."""
    return raised.short_type in LAUNCHER_TYPES or _ECHO.search(raised.message) is not None


@dataclass(frozen=True, kw_only=True)
class Frame:
    file: str
    """The file as printed (a path, or a shared library for a C++ frame)."""
    line: int | None
    """Line number in the file; None for a C++ frame."""
    function: str | None
    """The function, when printed."""
    package: str | None
    """The top-level package of a file under site-packages/ or dist-packages/ ("vllm", "torch");
    None for the user's own files."""
    code: str | None = None
    """The source line printed under the frame (`import torch`, `llm = sgl.Engine(...)`); None when not printed."""


@dataclass(frozen=True, kw_only=True)
class Raised:
    type: str
    """The exception's type as printed ("torch.OutOfMemoryError", "c10::Error", "NCCL"); "" when
    only a message is known."""
    message: str
    """The message; lines wrapped or continued in the log are joined with newlines."""
    frames: tuple[Frame, ...]
    """The traceback's frames, outermost first (as printed); empty without a traceback."""
    line: int
    """Line number of the exception line."""
    code: str | None = None
    """Without frames: the indented source line printed just above the exception line (a paste cut to the call site,
    `    self.model = Engine(Args(**kw))`), which says what was called; None otherwise."""

    @property
    def short_type(self) -> str:
        """The type without its module ("OutOfMemoryError")."""
        return self.type.rsplit(".", 1)[-1].rsplit("::", 1)[-1]

    @property
    def innermost(self) -> Frame | None:
        """The frame that raised it."""
        return self.frames[-1] if self.frames else None

    @property
    def cut_above_import(self) -> bool:
        """An import error whose last printed frame is the user's code on a line that imports nothing
        (`llm = sgl.Engine(...)`): the import ran in frames the paste or a launcher cut, a library's, so the user's
        code is not where it was raised."""
        frame = self.raiser
        return (self.short_type in _IMPORT_TYPES and frame is not None and frame.package is None and frame.code is not None
                and not _IMPORT_STATEMENT.search(frame.code))

    @property
    def raiser(self) -> Frame | None:
        """The innermost frame that is not the interpreter's own (`<frozen importlib._bootstrap>`, the standard
        library's importlib or ctypes): whose code the failure happened in, the user's or a package's."""
        for frame in reversed(self.frames):
            if frame.package is not None or not _INTERPRETER.search(frame.file):
                return frame
        return self.innermost


@dataclass
class ErrorDraft:
    """An error as it is read; `match.py` turns drafts into `RootError` records."""

    kind: ErrorKind
    chain: list[Raised]
    """Innermost (first raised) first: the cause, then what was raised while handling it."""
    first_line: int
    spans: list[tuple[int, int]]
    """Line ranges (first, last) of the log that belong to this error."""
    stream: str
    count: int = 1
    lines: list[str] = field(default_factory=list)
    """Text of the error's own lines (messages and continuations), for matching wrapped messages."""
    logged: bool = False
    """Only a logger's line reports it (an import failure printed without its type): programs log the optional imports
    they skip and go on, so such an error stands only in a log that shows no other error."""

    @property
    def root(self) -> Raised:
        return self.chain[0]

    def key(self) -> tuple[str, str]:
        """Two copies of one error (other ranks, retries) share this."""
        return (self.root.type, masked(self.root.message.split("\n", 1)[0]))


# A bare `Exception` too (`raise Exception(...)`: DeepSpeed's loss scaler, many projects) where a line starts with it; not
# a bare `Error:` or `Failure:`, which non-Python lines start with, nor a bare `Exception:` inside a line (`_exc_inside`),
# which loggers' prose holds.
_EXC_AT_START = re.compile(r"((?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)|Exception))(?::\s?(.*))?$")


@cache
def _exc_inside() -> re.Pattern[str]:
    """An exception named inside a line: before the type a space, punctuation, an opening bracket or quote (an issue's
    text quotes the error: `` `ValueError: x` ``, a Markdown link `[AttributeError: x](url)`), or a letter outside ASCII
    (Chinese and Japanese put no space before a quoted error). Compiled when first asked for: that class of every letter outside
    ASCII costs milliseconds of start-up, and most logs have no line that asks."""
    return re.compile(r"(?:^|(?<=[\s:\]\)>|\[(`\"'\u0080-\U0010ffff]))"
                      r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)): (.*)$")


_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in (.+))?|File ((?:[/~]|[A-Za-z]:\\)[^\s:"]+\.py):(\d+)(?:, in ([\w.<>]+))?|'
                    r'(Cell In\[\d+\]), line (\d+)|'
                    r'\[([^\]\s]+\.py)\]\([^)\s]*\) in ([\w.<>]+(?: line: \d+>)?)|'
                    r'^\s*(/[^\s:"\[\]()]+\.py) in ([\w.<>]+)(?:\(|$)|'
                    r'^\s*"?([^\s"]*[/\\][^"]*\.py)", line (\d+), in ([\w.<>]+)')
"""A frame as CPython prints it, as IPython/Jupyter prints a library's frame (`File /x/y.py:12, in f(...)`, the path
also under `~` or a Windows drive),
a notebook cell (the user's code), or as Colab links it (`[/x/y.py](https://localhost:8080/#) in f(...)`, no line),
or as older IPython and Colab print it without the link (`/x/y.py in f(a, b)` at the start of a line, no line),
or a CPython frame whose paste lost its start (`/lib/python3.12/site-packages/x/__init__.py", line 55, in <module>`:
a terminal or a selection cut before `File "` or after it; the quote after `.py` still tells it from prose)."""
_CPP_FRAME = re.compile(r"frame #\d+: (.*?) \+ 0x[0-9a-f]+ \(0x[0-9a-f]+ in ([^)]+)\)|"
                        r"frame #\d+: .*\(0x[0-9a-f]+ in ([^)]+)\)")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']+)'")
_INTERPRETER = re.compile(r"^<frozen |[/\\]lib[/\\]python3\.\d+[/\\](?!(?:site|dist)-packages)|[/\\]Lib[/\\](?!site-packages)")
"""A file of the interpreter itself: frozen modules and the standard library (not its site-packages)."""
_NOT_CONTINUED = re.compile(
    r"^(?:\s*File \"|Traceback \(|During handling|The above exception|\s*\^+\s*$|\s*~+|"
    r"\[?\d{4}-\d{2}-\d{2}|(?:INFO|WARNING|ERROR|DEBUG)\b|\s*$)"
)
_IMPORT_TYPES = frozenset({"ImportError", "ModuleNotFoundError"})
_IMPORT_STATEMENT = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s|\bimport_module\(|\b__import__\(|\bexec\(|\bimportlib\.")
"""A source line that imports: the import itself, or a dynamic one (importlib, __import__, exec of source)."""
_IMPORT_FAILURE = re.compile(r"No module named '[\w.]+'|cannot import name '\w+' from '[\w.]+'(?: \([^)\n]*\))?|"
                             r"[\w.+-]*\.so(?:\.\d+)*: (?:undefined|cannot open shared object)[^`'\"\n]*")
"""The third: the dynamic loader's message, which may wrap (in a terminal or an issue's text) after any word: its
lines that follow are read as its continuation, so the catalog sees the whole symbol."""
_CODE_LINE = re.compile(r"\s*(?:raise|except|from|import|if|elif|return|print|logger\.|logging\.|warnings\.)\b|\s*#")
"""A source line a traceback or a paste shows (`raise ImportError("No module named ...")`), not a report."""
_LINK_GAP = 4
"""Lines between an exception and a chain marker, and between the marker and the next traceback."""


def trimmed_paste(frames: Sequence[Frame]) -> tuple[Frame, ...]:
    """The frames of one traceback, read together: where a stack package's own folder is printed as a relative path
    (`vllm/distributed/kv_connector.py`, `RELATIVE_PACKAGES`), the paste or the logger cut the site-packages prefix
    from every frame, so another frame's relative path in a folder (`lmcache/...`, `kernels/layer/layer.py`) is an
    installed package's too, not the user's code. A bare file (`train.py`) stays the user's."""
    if not any(f.package is not None and stack_folder(f.file) for f in frames):
        return tuple(frames)
    return tuple(replace(f, package=owner) if f.package is None and (owner := folder_package(f.file)) else f for f in frames)


def _frame_parts(m: re.Match[str]) -> tuple[str, int | None, str | None]:
    """(file, line, function) of whichever of _FRAME's six shapes matched."""
    if m.group(1) is not None:
        return m.group(1), int(m.group(2)), m.group(3)
    if m.group(4) is not None:
        return m.group(4), int(m.group(5)), m.group(6)
    if m.group(7) is not None:
        return m.group(7), int(m.group(8)), None
    if m.group(9) is not None:
        return m.group(9), None, m.group(10)
    if m.group(11) is not None:
        return m.group(11), None, m.group(12)
    return m.group(13), int(m.group(14)), m.group(15)


@dataclass
class _Stream:
    frames: list[Frame] = field(default_factory=list)
    tb_start: int | None = None
    last: ErrorDraft | None = None
    last_end: int = 0
    link_line: int | None = None
    terminate: tuple[str, int] | None = None
    frame_line: int = 0
    """Log line of the last frame read."""


class ErrorBuilder:
    """Reads structural lines, in log order, into error drafts."""

    def __init__(self) -> None:
        self._streams: dict[str, _Stream] = {}
        self._drafts: list[ErrorDraft] = []
        self.dropped = 0
        """Errors read after MAX_ERRORS drafts were kept (counted, not kept)."""
        self.reported: dict[str, str] = {}
        """The versions the log reports outside its errors ({"vllm": "0.5.0"}); none for a package reported at two
        releases (a freeze before and after an upgrade, an issue comparing two environments: which one raised is
        not known, and an answer taken against the wrong one points the wrong way)."""
        self._conflicting: set[str] = set()

    def feed(self, event: Event, number: int, text: str, following: Sequence[str] = (), before: str = "") -> None:
        """One structural line (`number` in the log); `following` are the lines after it, for the
        rest of an exception's message; `before` the line above an exception's."""
        st = self._stream(stream(text), number)
        line = body(text)
        if event is Event.TRACEBACK:
            st.frames, st.tb_start = [], number
        elif event is Event.FRAME:
            m = _FRAME.search(line)
            if m is not None:
                if st.tb_start is None:
                    st.tb_start = number
                file, at, function = _frame_parts(m)
                st.frames.append(Frame(file=file, line=at, function=function, package=package_of(file), code=_code(following, text)))
                del st.frames[:-_FRAMES_KEPT]
                st.frame_line = number
        elif event is Event.CPP_FRAME:
            self._cpp_frame(st, number, line)
        elif event in (Event.CAUSE, Event.CONTEXT):
            st.link_line = number
        elif event is Event.TERMINATE:
            m = _TERMINATE.search(line)
            st.terminate = (m.group(1) if m else "", number)
        elif event is Event.WHAT:
            message = line.split("what():", 1)[1].strip()
            kind_type = st.terminate[0] if st.terminate and number - st.terminate[1] <= 2 else ""
            st.terminate = None
            self._add(st, ErrorKind.CPP, kind_type, message, number, text, following)
        elif event is Event.EXCEPTION:
            self._exception(st, number, line, text, following, before)
        elif event is Event.NCCL:
            if not self._inside(st, number):
                self._add(st, ErrorKind.NCCL, "NCCL", clean(text), number, text, ())
        elif event in (Event.VERSION, Event.CHOICE) and not self._inside(st, number):
            self._add(st, ErrorKind.LINE, "", clean(text), number, text, following)
        elif event is Event.REPORTED and len(self.reported) < _REPORTED_KEPT and (found := reported_version(line)):
            self._report(*found)
        elif event is Event.IMPORT and not self._inside(st, number):
            self._logged_import(st, number, line, text, following)

    def _stream(self, key: str, number: int) -> _Stream:
        st = self._streams.get(key)
        if st is None:
            st = self._streams[key] = _Stream()
            bare = self._streams.get("")
            if key and bare is not None and bare.tb_start is not None and bare.frames and number - bare.frame_line <= _LINK_GAP:
                # A paste cut inside its first line loses that line's prefix (`File ".../block_optim.py", line 306`
                # above `[rank2]:     ds_optimizer...`): the traceback it opened is the first prefixed stream's.
                st.frames, st.tb_start, st.frame_line = bare.frames, bare.tb_start, bare.frame_line
                bare.frames, bare.tb_start = [], None
        return st

    def _report(self, name: str, version: str) -> None:
        if name in self._conflicting:
            return
        if self.reported.setdefault(name, version).split("+")[0] != version.split("+")[0]:
            del self.reported[name]
            self._conflicting.add(name)

    def _inside(self, st: _Stream, number: int) -> bool:
        return st.last is not None and any(a <= number <= b for a, b in st.last.spans[-1:])

    def _cpp_frame(self, st: _Stream, number: int, line: str) -> None:
        m = _CPP_FRAME.search(line)
        if m is None or st.last is None or number - st.last_end > 60:
            return
        path = m.group(2) or m.group(3) or ""
        frames = list(st.last.root.frames)
        if len(frames) < _FRAMES_KEPT:
            # C++ frames print innermost first; Python frames outermost first: keep Python's order.
            frames.insert(0, Frame(file=path.strip(), line=None, function=(m.group(1) or None), package=package_of(path)))
            root = st.last.root
            st.last.chain[0] = Raised(type=root.type, message=root.message, frames=tuple(frames), line=root.line)
        st.last.spans[-1] = (st.last.spans[-1][0], number)
        st.last_end = number

    @staticmethod
    def _call_site(draft: ErrorDraft, text: str, before: str) -> None:
        """Keeps the indented code line above a frameless exception line as the call that raised it."""
        line = body(before)
        code = line.strip()
        if stream(before) != stream(text) or not line[:1].isspace() or "(" not in code or _NOT_CONTINUED.match(line) \
                or _EXC_AT_START.match(code) or code.startswith(("File ", "Traceback")):
            return
        root = draft.chain[-1]
        draft.chain[-1] = Raised(type=root.type, message=root.message, frames=root.frames, line=root.line, code=code[:200])

    def _logged_import(self, st: _Stream, number: int, line: str, text: str, following: Sequence[str]) -> None:
        if _CODE_LINE.match(line) or _exc_inside().search(clean(text)) or _EXC_AT_START.match(line.strip()):
            return  # code that raises it, or an exception line the EXCEPTION event reads
        m = _IMPORT_FAILURE.search(line)
        if (wrapper := BARE_WRAPPER.search(line)) is not None:
            self._add(st, ErrorKind.LINE, "RuntimeError", line[wrapper.start():].strip(), number, text, following)
        elif m is not None:
            etype = "ModuleNotFoundError" if m.group(0).startswith("No module") else "ImportError"
            loader = ".so" in m.group(0) and not m.group(0).startswith(("No module", "cannot import"))
            self._add(st, ErrorKind.LINE, etype, m.group(0).strip().rstrip(".,;"), number, text, following if loader else ())
        elif (call := BARE_CALL.search(line)) is not None:
            self._add(st, ErrorKind.LINE, "TypeError", call.group(0).rstrip("`"), number, text, ())
        elif (member := BARE_MEMBER.search(line)) is not None:
            self._add(st, ErrorKind.LINE, "AttributeError", f"'{member[1]}' object has no attribute '{member[2]}'", number, text, ())
        else:
            return
        # Read without its type (a title, prose, a logger's line): it stands only where no printed exception does, and
        # never in place of the traceback that says who raised it.
        if st.last is not None and st.last.first_line == number:
            st.last.logged = True

    def _exception(self, st: _Stream, number: int, line: str, text: str, following: Sequence[str], before: str = "") -> None:
        if line[:1].isspace():
            return  # a traceback's code line (`    raise ValueError`), not the exception
        m = _EXC_AT_START.match(line.strip())
        message = (m.group(2) or "").strip() if m is not None else ""
        if m is None:
            m = _exc_inside().search(clean(text))
            if m is None:
                return
            message = _unquoted(m.string[m.start(1) - 1:m.start(1)], m.group(2).strip())
        self._add(st, ErrorKind.PYTHON, *_one_of_interleaved(m.group(1), message), number, text, following)
        if before and st.last is not None and st.last.first_line == number and not st.last.root.frames:
            self._call_site(st.last, text, before)

    def _add(self, st: _Stream, kind: ErrorKind, etype: str, message: str, number: int, text: str, following: Sequence[str]) -> None:
        rest = _continuation(following, stream(text))
        if rest:
            message = "\n".join([message, *rest]) if message else "\n".join(rest)
        frames = trimmed_paste(st.frames) if st.tb_start is not None and kind is ErrorKind.PYTHON else ()
        start = st.tb_start if frames and st.tb_start is not None else number
        end = number + len(rest)
        raised = Raised(type=etype, message=message, frames=frames, line=number)
        st.frames, st.tb_start = [], None
        linked = self._links(st, start)
        st.link_line = None
        if linked and st.last is not None:
            st.last.chain.append(raised)
            st.last.spans.append((start, end))
            st.last.lines.extend([clean(text), *rest])
            st.last_end = end
            return
        nested = _nested(raised)
        draft = ErrorDraft(kind=kind, chain=[*nested, raised], first_line=start, spans=[(start, end)], stream=stream(text),
                           lines=[clean(text), *rest])
        st.last, st.last_end = draft, end
        if len(self._drafts) < MAX_ERRORS:
            self._drafts.append(draft)
        else:
            self.dropped += 1

    @staticmethod
    def _links(st: _Stream, start: int) -> bool:
        """Whether a traceback starting at `start` continues the stream's last error across a chain marker."""
        return (st.link_line is not None and st.last is not None
                and 0 <= st.link_line - st.last_end <= _LINK_GAP and 0 <= start - st.link_line <= _LINK_GAP + 2)

    def drafts(self) -> list[ErrorDraft]:
        """The errors read so far, copies of one error merged (first seen kept, counted), and a traceback the log
        ends inside (a paste cut before its exception line) as an error whose message says so: where its frames
        stop still says whose code failed."""
        merged: dict[tuple[str, str], ErrorDraft] = {}
        for d in [*self._drafts, *self._unfinished()]:
            key = d.key()
            seen = merged.get(key)
            if seen is None:
                merged[key] = d
            elif seen.logged and not d.logged:  # the printed exception, with its frames, over a title's retelling
                d.count += seen.count
                d.spans[:0] = seen.spans
                merged[key] = d
            else:
                seen.count += 1
                seen.spans.extend(d.spans)
        out = list(merged.values())
        # A logged import failure stands only where nothing failed; a wrapper that echoes an error reported elsewhere
        # is no failure of its own, so beside one the logged line may be the error it echoes.
        if any(not d.logged and not echoes(d.root) for d in out):
            return [d for d in out if not d.logged]
        return out


    def _unfinished(self) -> list[ErrorDraft]:
        out: list[ErrorDraft] = []
        for where, st in self._streams.items():
            if st.tb_start is None or not st.frames or len(self._drafts) + len(out) >= MAX_ERRORS:
                continue
            raised = Raised(type="", message=UNFINISHED, frames=trimmed_paste(st.frames), line=st.frame_line)
            if self._links(st, st.tb_start):
                # "During handling of the above exception" then a cut traceback: the error it was raised while
                # handling is the same failure, and the cut frames still say what the program was doing then.
                assert st.last is not None
                st.last.chain.append(raised)
                st.last.spans.append((st.tb_start, st.frame_line))
                continue
            out.append(ErrorDraft(kind=ErrorKind.PYTHON, chain=[raised], first_line=st.tb_start, spans=[(st.tb_start, st.frame_line)],
                                  stream=where, lines=[UNFINISHED]))
        return out


_REPEATED_TYPE = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*?(?:Error|Exception|Exit|Interrupt|Failure))\1+")


def _one_of_interleaved(etype: str, message: str) -> tuple[str, str]:
    """The exception that ranks writing to one terminal at once printed as one line: `KeyErrorKeyError: : 'x'` is two
    ranks' `KeyError: 'x'` interleaved character runs apart, and is read as that KeyError (its type decides the verdict:
    `KeyErrorKeyError` is no type)."""
    m = _REPEATED_TYPE.fullmatch(etype)
    if m is None:
        return etype, message
    copies = len(etype) // len(m.group(1))
    return m.group(1), re.sub(rf"^(?::\s*){{0,{copies - 1}}}", "", message)


_CLOSERS = {"`": re.compile(r"^(.*?)`[.,;:]?$"), '"': re.compile(r'^(.*?)"[.,;:]?$'),
             "[": re.compile(r"^(.*?)\](?:\([^)\s]*\))?[.,;:]?$"), "(": re.compile(r"^(.*?)\)[.,;:]?$")}
"""The end of a quote an issue's text opened before an exception's type: a backtick, a double quote, a Markdown link."""


def _unquoted(opener: str, message: str) -> str:
    """The message without the closing half of the quote `opener` opened before its type."""
    closer = _CLOSERS.get(opener)
    m = closer.match(message) if closer is not None else None
    return m.group(1) if m is not None else message


UNFINISHED = "the log ends inside this traceback: its exception line is missing"
"""The message of a traceback cut before its exception line."""

_NESTED = re.compile(r"^.*because of the following error(?: \(look up to see its traceback\))?:\s*\n(.+)", re.S)
"""The last wrapper's marker (greedy; a paste may drop the parenthesis): a lazy import that failed inside another
(`integration_utils` because of `modeling_utils` because of the real error) nests its message once per level, and the
innermost is the error."""


def _nested(outer: Raised) -> list[Raised]:
    """The error a lazy importer's wrapper message carries inside it, when its own traceback was
    not printed before it (transformers: `Failed to import X because of the following error`)."""
    m = _NESTED.search(outer.message)
    if m is None:
        return []
    inner = m.group(1).strip()
    t = _EXC_AT_START.match(inner.split("\n", 1)[0])
    if t is not None and t.group(2) is not None:
        return [Raised(type=t.group(1), message=t.group(2).strip(), frames=(), line=outer.line)]
    return [Raised(type=type_of(inner), message=inner, frames=(), line=outer.line)]


_IPYTHON_CURRENT = re.compile(r"^\s*-+>\s*\d+\s(.+)$")
"""IPython's and Colab's mark of a frame's current line among its context lines (`---> 10 from unsloth import x`)."""


def _code(following: Sequence[str], frame_text: str) -> str | None:
    """The source line printed under a frame, when the next line of its stream is one (not another frame, a marker or
    the exception line); in IPython's format, the context line marked as the current one."""
    if not following or stream(following[0]) != stream(frame_text):
        return None
    for raw in following:
        if stream(raw) != stream(frame_text) or _FRAME.search(body(raw)):
            break  # the next frame's lines are not this frame's
        m = _IPYTHON_CURRENT.match(body(raw))
        if m is not None:
            return m.group(1).strip()[:200]
    line = body(following[0]).strip()
    if not line and len(following) > 1 and stream(following[1]) == stream(frame_text) and body(following[1])[:1].isspace():
        line = body(following[1]).strip()  # a paste that doubled its line breaks: the indented line after the blank one
    if not line or _NOT_CONTINUED.match(line) or _EXC_AT_START.match(line) or line.startswith(("File ", "Traceback")):
        return None
    return line[:200]


def _continuation(following: Sequence[str], where: str) -> list[str]:
    out: list[str] = []
    for raw in following[:MAX_FOLLOWING]:
        if stream(raw) != where:
            break
        line = body(raw)
        if _NOT_CONTINUED.match(line) or (_EXC_AT_START.match(line.strip()) and ":" in line):
            break
        out.append(line.strip())
    return out
