"""The API question an exception asks: what it says is missing (`cannot import name 'X' from 'Y'`,
`No module named 'y.z'`, `module 'y' has no attribute 'X'`, `f() got an unexpected keyword
argument 'k'`, `missing 1 required positional argument: 'k'`, `invalid choice: 'vllm-serve'`, an
unknown model type) and who asked (the innermost frame under site-packages/<pkg>/, else the
user's code). The API timeline answers it (compat/timeline/drift.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compat.explain.roots import Frame, Raised
from compat.timeline.records import ApiQuestion, Missing

_IMPORT_NAME = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_MODULE = re.compile(r"No module named '(\w+(?:\.\w+)+)(?:'|$)")
"""The closing quote may be lost where the message ends: an issue's title keeps the line but not always its last
character (`No module named 'vllm.model_executor.input_metadata`)."""
_ATTRIBUTE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
_KEYWORD = re.compile(r"(?:^|[\s(`])([\w.]+|<lambda>)\(\) got an unexpected keyword argument (?:'(\w+)'|`?(\w+)`?(?![\w'.(]))")
"""Python quotes the argument; a message retyped into an issue's prose may not (`Accelerator.__init__() got an
unexpected keyword argument use_seedable_sampler`): the same question, its name in the second group or the third."""
_OBJECT = re.compile(r"(?:type object '(\w+)'|'(\w+)' object) has no attribute '(\w+)'")
_TOO_MANY = re.compile(r"(?:^|[\s(])([\w.]+|<lambda>)\(\) takes (?:from \d+ to )?\d+ positional arguments? but (\d+) (?:were|was) given")
_SUPER_INIT = re.compile(r"\bsuper\(\s*(?:\w+\s*,\s*self\s*)?\)\.__init__\s*\(")
_CLASS_CALL = re.compile(r"(?<![\w.])((?:[a-z_]\w*\.)*)([A-Z]\w*)\s*\(")
"""A class called on a line (`SFTTrainer(`, `vllm.AsyncEngineArgs(`), with the module path it is written with."""
_SITE_FILE = re.compile(r"(?:site|dist)-packages/((?:\w+/)*\w+)(?:/__init__)?\.py$")
_WRAPPER = re.compile(r"DataParallel|DistributedDataParallel|FullyShardedDataParallel|FSDP[A-Z]?\w*|OptimizedModule|"
                      r"ModuleDict|ModuleList|Sequential|ParameterList|ParameterDict")
"""torch.nn's wrappers and containers (FSDP2 names its class FSDP<Model>): an attribute the model has is
missing from its wrapper because of how the program runs (plain `python` on several GPUs wraps the
model in DataParallel), not because a release dropped it; the timeline is not asked."""
_POSITIONAL = re.compile(r"(?:^|[\s(])([\w.]+|<lambda>)\(\) missing \d+ required (?:positional|keyword-only) arguments?: '(\w+)'")
# Bounded repeats: a program name may hold spaces, so an unbounded one is tried from every space of a
# long line to its end (quadratic).
_CHOICE = re.compile(r"(?:^|\n|\s)(?:([\w .-]{1,100}): )?error: argument [^:\n]{0,300}: invalid choice: '([\w.:-]+)'")
_USAGE = re.compile(r"usage: ([\w.-]+)")
_MODEL_TYPE = re.compile(r"model type [`'\"]([\w.-]+)[`'\"] but Transformers does not recognize")
_ARCH = re.compile(r"Model architectures? \['(\w+)'")
_AUTO_MODULE = re.compile(r"(?:configuration|tokenization|processing|image_processing|feature_extraction|modeling)_auto\.py$")
"""transformers' auto modules: each looks a checkpoint's model type up in its mappings (CONFIG_MAPPING[...])."""
_AUTO_CALL = re.compile(r"\bAuto(?:Config|Tokenizer|Processor|ImageProcessor|FeatureExtractor|Model\w*)\.from_pretrained\(")
"""A call into those auto classes: a KeyError on that line, with the paste cut before transformers' own frames,
was raised by the lookup inside."""
_MODEL_TYPE_KEY = re.compile(r"[a-z][a-z0-9_]{1,40}")
_REFUSED = re.compile(r"\b(?:does not exist|doesn't exist|not in\b|(?:is |are )?not (?:yet )?supported|unsupported|unknown|"
                      r"unrecogni[sz]ed|not registered|no such)", re.IGNORECASE)
"""A registry refusing a name: ms-swift's `model_type: 'gpt-oss' not in [...]`, `Model type qwen2_5_vl not
supported.`, `Unsupported model type: qwen2_5_vl`."""
_OF_MODEL_TYPES = re.compile(r"\bmodel[_ ]type", re.IGNORECASE)
"""Only a registry of model types: LLaMA-Factory's `Template qwen2 does not exist.` names a chat template, whose
names (`qwen`, not `qwen2`) are not transformers' model types, so a registered model type there says nothing."""
_LISTED = re.compile(r"[\[{(]|\b(?:choose from|one of|must be|expected|supported (?:\w+ ){0,3}(?:are|is|include)s?)\b",
                     re.IGNORECASE)
"""Where a message starts listing the names it would accept: those are registered, not the one refused."""
_RECENT_TYPE = re.compile(r"(?<![\w./-])([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Za-z]+\d[A-Za-z0-9]*)(?![\w/-])")
"""A name shaped like a model type of the last years (a digit, an underscore or a hyphen: qwen3_vl, gpt-oss, gemma3)."""


def question(raised: Raised, frames: Sequence[Frame] = (), usage: str | None = None) -> ApiQuestion | None:
    """What `raised` says is missing; None when it is not an API question. `frames` defaults to its own;
    `usage` is the program an argparse `usage:` line named."""
    frames = tuple(frames) or raised.frames
    caller = _top(_caller(frames))
    text = raised.message
    if m := _IMPORT_NAME.search(text):
        return ApiQuestion(missing=Missing.IMPORT_NAME, name=m.group(1), module=m.group(2), caller=caller)
    if m := _MODULE.search(text):
        return ApiQuestion(missing=Missing.MODULE, name=m.group(1), module=m.group(1), caller=caller)
    if m := _ATTRIBUTE.search(text):
        return ApiQuestion(missing=Missing.ATTRIBUTE, name=m.group(2), module=m.group(1), caller=caller)
    if called := _called(raised, frames, caller):
        return called[0]
    if (m := _OBJECT.search(text)) and _is_class_of_a_package(cls := m.group(1) or m.group(2)):
        return ApiQuestion(missing=Missing.MEMBER, name=m.group(3), module=cls, caller=caller)
    if "invalid choice" in text and (m := _CHOICE.search(text)):
        prog = usage or (m.group(1) or "").strip() or None
        return ApiQuestion(missing=Missing.CLI_CHOICE, name=m.group(2), module=prog, caller=None)
    if m := _MODEL_TYPE.search(text):
        return ApiQuestion(missing=Missing.MODEL_TYPE, name=m.group(1), module="transformers", caller=caller)
    if m := _ARCH.search(text):
        return ApiQuestion(missing=Missing.MODEL_TYPE, name=m.group(1), module="vllm", caller=caller)
    if raised.short_type == "KeyError" and (key := _model_type_key(raised)):
        return ApiQuestion(missing=Missing.MODEL_TYPE, name=key, module="transformers", caller=None,
                           known_only=raised.innermost is None)
    if raised.short_type == "KeyError" and (own := _own_table_key(raised)):
        return ApiQuestion(missing=Missing.MODEL_TYPE, name=own[1], module=own[0], caller=own[0])
    return None


_STRUCT_KEYWORD = re.compile(r"Unexpected keyword argument '(\w+)'$")
"""msgspec's refusal of a field a Struct does not declare (vLLM's SamplingParams since 0.5.5)."""
_CALL_WORDINGS = ((_KEYWORD, Missing.KEYWORD), (_POSITIONAL, Missing.POSITIONAL), (_TOO_MANY, Missing.POSITIONAL_COUNT))
_CALLED = frozenset(missing for _, missing in _CALL_WORDINGS)


def questions(raised: Raised) -> tuple[ApiQuestion, ...]:
    """`question`'s answer, else one question per name a registry refuses (`_refused_names`), each asked on the
    name's shape alone: answered only where transformers registers it (known_only), so a typo or a data value asks
    nothing."""
    if (q := question(raised)) is not None:
        return _called(raised, raised.frames, q.caller) if q.missing in _CALLED else (q,)
    if m := _CLASS_LOOKUP.search(raised.message):
        # transformers looked the class a checkpoint's config names up among its own: the release that has it decides,
        # one no release has (remote code, a typo in tokenizer_config.json) asks nothing
        return (ApiQuestion(missing=Missing.IMPORT_NAME, name=m.group(1) or m.group(2), module="transformers",
                            caller=None, known_only=True),)
    return tuple(ApiQuestion(missing=Missing.MODEL_TYPE, name=name, module="transformers", caller=None, known_only=True)
                 for name in _refused_names(raised))


_CLASS_LOOKUP = re.compile(r"\bTokenizer class (\w+) does not exist or is not currently imported|"
                           r"\bCould not find (\w+) neither in <module 'transformers[\w.]*'")
"""transformers' lookups of a class a checkpoint names (tokenizer_config.json's `tokenizer_class`, a processor's
`*_class`) among the classes it has: `Tokenizer class TokenizersBackend does not exist or is not currently imported`
(a checkpoint saved by transformers 5 read by 4.x), `Could not find Qwen2_5_VLVideoProcessor neither in <module
'transformers.models.qwen2_5_vl' ...>`."""


def _caller(frames: Sequence[Frame]) -> str | None:
    # The innermost Python frame of a file (not `<frozen importlib._bootstrap>`) is the caller.
    return next((f.package for f in reversed(frames) if f.line is not None and not f.file.startswith("<")), None)


def _called(raised: Raised, frames: Sequence[Frame], caller: str | None) -> tuple[ApiQuestion, ...]:
    """The questions a call's TypeError asks (an unexpected keyword, a required argument missing, too many positional
    ones), several when the message names no class (`__init__() got an unexpected keyword argument 'x'`, as Pythons
    before 3.10 print it): one per callee the call site's source line can be calling (`_callees`)."""
    text = raised.message
    if m := _STRUCT_KEYWORD.match(text):
        # msgspec's wording, which names no callable: a Struct's construction on the call site's line.
        return tuple(ApiQuestion(missing=Missing.KEYWORD, name=m.group(1), module=module, caller=caller, base_of=base_of)
                     for module, base_of in _callees("__init__", frames, raised.code))
    for pattern, missing in _CALL_WORDINGS:
        if m := pattern.search(text):
            callees = _callees(m.group(1), frames, raised.code) if "." not in m.group(1) else ()
            name = m.group(2) if m.group(2) is not None else m.group(3)  # _KEYWORD's unquoted argument
            override_in = _self_call_module(m.group(1), frames) if missing is not Missing.POSITIONAL else None
            return tuple(ApiQuestion(missing=missing, name=name, module=module, caller=caller, base_of=base_of,
                                     override_in=override_in)
                         for module, base_of in callees or ((m.group(1), None),))
    return ()


def _self_call_module(callee: str, frames: Sequence[Frame]) -> str | None:
    """The module of a package's frame that calls the refused method on its own object (`self.training_step(model,
    inputs, num_items_in_batch)` in transformers' trainer.py): what answers is an override of that package's method
    (a subclass's, the program's or another package's), so the call is the package's release's and the override is
    out of step with it (compat/timeline/overrides.py). None for any other call."""
    inner = frames[-1] if frames else None
    method = callee.rpartition(".")[2]
    if inner is None or inner.package is None or inner.code is None or not method.isidentifier():
        return None
    if not re.search(rf"\bself\.{re.escape(method)}\s*\(", inner.code):
        return None
    return _module_of(inner.file)


def _callees(bare: str, frames: Sequence[Frame], code: str | None) -> tuple[tuple[str, str | None], ...]:
    """(qualname, base_of) of what a call named only by its function (`__init__`, `from_pretrained`) can be: the
    TypeError is raised at the call, so the innermost frame's source line (or, in a paste without frames, the code line
    printed above the exception) is the call site. `super().__init__(...)` in a package's file calls the base of the
    class that file defines, which only the index knows (base_of: the file's module); a class called on the line
    (`SFTTrainer(model, ...)`, `AsyncEngineArgs(**args)`), the innermost call first, is its `__init__`; a method
    called on a class (`AutoModel.from_pretrained(...)`) is that class's. Nothing for a lambda or a method called
    on an instance (`self.model.generate`), whose class the line does not name."""
    inner = frames[-1] if frames else None
    line = inner.code if inner is not None else code
    if line is None or bare == "<lambda>":
        return ()
    if bare == "__init__" and _SUPER_INIT.search(line):
        module = _module_of(inner.file) if inner is not None and inner.package else None
        return ((bare, module),) if module else ()
    pattern = _CLASS_CALL if bare == "__init__" else re.compile(rf"(?<![\w.])((?:[a-z_]\w*\.)*)([A-Z]\w*)\.{re.escape(bare)}\s*\(")
    out: list[tuple[str, str | None]] = []
    for path, name in reversed(pattern.findall(line)):  # an argument's call runs before the call it is passed to
        # The path as written first (`deepspeed.zero.Init(`: a package's class its top level does not export), then
        # the class alone (`self.Trainer(`, `np.` or an alias: no package's path).
        for qual in ([f"{path}{name}.{bare}"] if path else []) + [f"{name}.{bare}"]:
            if (qual, None) not in out:
                out.append((qual, None))
    if not out and bare != "__init__" and bare.isidentifier():
        # A module's function called by its path (`deepspeed.initialize(`, `peft.get_peft_model(`).
        out = [(f"{path}{bare}", None) for path in dict.fromkeys(re.findall(rf"(?<![\w.])((?:[a-z_]\w*\.)+){re.escape(bare)}\s*\(", line))]
    return tuple(out)


def _module_of(file: str) -> str | None:
    """The dotted module of a file under site-packages (`trl.trainer.grpo_trainer`)."""
    m = _SITE_FILE.search(file.replace("\\", "/"))
    return m.group(1).replace("/", ".") if m else None


def _refused_names(raised: Raised) -> tuple[str, ...]:
    """The names, shaped like recent model types, that a package's registry of model types refuses before listing
    what it accepts (`model_type: 'gpt-oss' not in [...]`): a framework or transformers older than the model. Not when the user's own
    code raised it, nor for a KeyError (asked above, where its key is read as data unless transformers raised it)."""
    inner = raised.innermost
    if raised.short_type == "KeyError" or (inner is not None and inner.package is None):
        return ()
    head = _LISTED.split(raised.message, maxsplit=1)[0]
    if not (_REFUSED.search(head) and _OF_MODEL_TYPES.search(head)):
        return ()
    out: list[str] = []
    for m in _RECENT_TYPE.finditer(head):
        word = m.group(1).lower()
        for name in (word, word.replace("-", "_")):
            if name not in out:
                out.append(name)
    return tuple(out)


def _own_table_key(raised: Raised) -> tuple[str, str] | None:
    """(package, key) for a KeyError raised in an installed package's own code (liger-kernel's, peft's table of
    the model types it supports) on a key shaped like a model type: the timeline answers only where that package
    indexes model types and transformers knows the key (compat/timeline/drift.py), so a data key stays unasked."""
    inner = raised.innermost
    key = raised.message.strip().strip("'\"")
    if inner is None or inner.package is None or not _MODEL_TYPE_KEY.fullmatch(key):
        return None
    top = _top(inner.package)
    return (top, key) if top and top != "transformers" else None


def _model_type_key(raised: Raised) -> str | None:
    """The model type a KeyError names when transformers' auto machinery raised it: its innermost frame is an auto
    module, or (a paste cut above transformers' frames) a line calling an auto class's from_pretrained."""
    inner = raised.innermost
    key = raised.message.strip().strip("'\"")
    if inner is None:
        # Printed with no traceback (an issue title, a one-line paste): a key shaped like a recent model type (a digit
        # or an underscore: qwen3_moe, gemma3) is asked; the timeline answers only where transformers registers it.
        return key if not raised.frames and _MODEL_TYPE_KEY.fullmatch(key) and re.search(r"[\d_]", key) else None
    if _AUTO_MODULE.search(inner.file.replace("\\", "/")):
        return key if re.fullmatch(r"[\w.-]+", key) else None
    if inner.code is not None and _AUTO_CALL.search(inner.code) and _MODEL_TYPE_KEY.fullmatch(key):
        return key
    return None


def _is_class_of_a_package(name: str) -> bool:
    """A class name the timeline may index: capitalised (not a builtin's `str`), not NoneType, not a torch wrapper."""
    return name[:1].isupper() and name != "NoneType" and not _WRAPPER.fullmatch(name)


def _top(package: str | None) -> str | None:
    return package.split(".")[0] if package else None
