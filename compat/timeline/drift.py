"""API drift: an import, attribute, argument, subcommand or model type that one side of a call
expects and the other side's release does not have, answered from the API timeline.

explain reads the question out of an exception (compat/explain/drift.py: what is missing, and who
asked). `answer(question, facts, source)` looks both sides up in the index and says which side is too
old or too new, the releases that work, and the fix for the installed versions.

The answer never claims more than the index shows: a release that is not indexed, a callable that
takes `**kwargs`, or a module the index does not know leaves the answer undecided, with why.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from compat.model.unknown import Unknown
from compat.timeline.homes import callee_home, distribution_of, owners
from compat.timeline.index import PackageApi, decode_spans, encode_spans, import_names, signatures_of
from compat.timeline.links import NATIVE_NAMES, ApiSource, after, newer
from compat.timeline.records import ApiAnswer, ApiKind, ApiQuestion, Drift, ImportKind, Missing, Span

if TYPE_CHECKING:
    from compat.model.facts import Facts


def installed_version(facts: Facts | None, package: str | None) -> str | None:
    if facts is None or package is None:
        return None
    dist = facts.package(package)
    if dist is None or isinstance(dist, Unknown):
        return None
    return dist.public_version


def answer(q: ApiQuestion, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None = None) -> ApiAnswer | None:
    """The index's answer; None when no indexed package is the callee. `stated`: versions the log
    states it found ({"transformers": "4.46.0"}), used for a package the facts do not give."""
    if q.base_of is not None:
        return _answer_super(q, facts, source, stated)
    found = _locate(q, source)
    if found is None:
        return None
    api, kind, key, callable_known = found
    base = _unjudged(q, facts, api, kind, key)
    if stated:
        base = replace(base, installed=base.installed or stated.get(api.package),
                       caller_installed=base.caller_installed or (stated.get(base.caller) if base.caller else None))
    if kind is ApiKind.MEMBER:
        base = _dated_by_init(api, _member_known(api, base))
        if not base.present and base.reason is not None and (inherited := _inherited(q, api, base, facts, source, stated)):
            return inherited
    settled = _settled(api, base, kind, key, callable_known)
    if settled is not None:
        return _with_home(settled, source)
    if _too_new(base) and base.removed_in is not None:
        return _callee_too_new(api, source, base, base.removed_in)
    return _callee_too_old(api, source, base)


def _answer_super(q: ApiQuestion, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None) -> ApiAnswer | None:
    """`super().__init__(...)` in a package's module: the question asked of each base of the class the module
    defines (`_module_bases`), the first that decides."""
    first: ApiAnswer | None = None
    for base in _module_bases(q.base_of or "", facts, source, stated):
        a = answer(replace(q, module=f"{base}.__init__", base_of=None), facts, source, stated)
        if a is not None and a.decided:
            return a
        first = first or a
    return first


def _module_bases(module: str, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None) -> list[str]:
    """The bases (class names) of the classes module `module` holds, over the package's releases: of the class
    named like the module (`GRPOTrainer` in `grpo_trainer.py`) when there is one, since a module also holds the
    classes it imports. Empty when the index keys no bases for them."""
    api = source.get(distribution_of(module.split(".")[0]))
    if isinstance(api, Unknown):
        return []
    root = (api.top_level or import_names(api.package))[0]
    release = installed_version(facts, api.package) or (stated or {}).get(api.package)
    # Every release's, the installed one's first, newest next: a base the index does not follow (trl's `_BaseTrainer`,
    # `trl.trainer.base_trainer.BaseTrainer`, not exported at the top) hides the public one an older release wrote.
    releases = [r for r in (release, *reversed(api.releases)) if r is not None]
    keys = api.keys(ApiKind.NAME)
    prefix = f"{module}:"
    names = [k[len(prefix):] for k in keys[bisect.bisect_left(keys, prefix):bisect.bisect_left(keys, prefix + "\U0010ffff")]]
    stem = module.rpartition(".")[2].replace("_", "").lower()
    named = [n for n in names if n.lower() == stem]
    out: list[str] = []
    for name in named or names:
        for r in releases:
            out += [b for b in _public_bases(api, f"{root}:{name}", r) if b not in out]
    return out


def _public_bases(api: PackageApi, cls: str, release: str, depth: int = 0) -> list[str]:
    """The public bases of `cls` in `release`, nearest first, those of the same package followed up (trl's
    `BaseTrainer` to transformers' `Trainer`): a `super().__init__` reaches the first that defines `__init__`."""
    bases = api.bases(cls, release)
    if isinstance(bases, Unknown) or depth > 12:
        return []
    out: list[str] = []
    for written in bases:
        short = written.rpartition(":")[2].rpartition(".")[2]
        if not short.startswith("_"):
            out.append(short)
        if ":" in written:
            out += _public_bases(api, written, release, depth + 1)
    return out


def _unjudged(q: ApiQuestion, facts: Facts | None, api: PackageApi, kind: ApiKind, key: str) -> ApiAnswer:
    """What the index and the host say about the key, before any verdict.

    For a call's shape (SIGNATURE: too many positional arguments, a required one missing) the key is
    the callable and `present` the releases whose signature accepts the call."""
    present = works(api, q, key) if kind is ApiKind.SIGNATURE else api.present(kind, key)
    first = api.releases[api.start(kind) or 0]
    caller_dist = distribution_of(q.caller) if q.caller else None
    if caller_dist == api.package:
        caller_dist = None  # a package importing itself: the callee's own release is at fault
    return ApiAnswer(question=q, package=api.package, kind=kind, key=key, present=present,
                     installed=installed_version(facts, api.package),
                     removed_in=after(api, present[-1].last) if present else None,
                     added_in=present[0].first if present and present[0].first != first else None,
                     caller=caller_dist, caller_installed=installed_version(facts, caller_dist),
                     caller_import=None, caller_fixed_in=None, drift=Drift.UNDECIDED, fix=())


def _settled(api: PackageApi, base: ApiAnswer, kind: ApiKind, key: str, callable_known: bool) -> ApiAnswer | None:
    """The answer when it needs no fix (unknowable, never existed, installed has it); None otherwise."""
    present, installed = base.present, base.installed
    if base.reason is not None:
        return base
    if kind is ApiKind.PARAM and base.removed_in is not None and (blind := _params_unread(api, key, base.removed_in)):
        return replace(base, reason=blind)
    if not present:
        if kind is ApiKind.NAME and api.package in NATIVE_NAMES:
            # A name some releases define in Python is decided by them; one none does may live in the C extension.
            return replace(base, reason=f"{api.package} defines most names in its C extension, which the index cannot read")
        if not callable_known and kind is ApiKind.PARAM:
            return replace(base, reason=f"no indexed {api.package} release has {key}, but the callable may take it as **kwargs")
        if not callable_known:
            return replace(base, reason=f"{api.package}'s index does not know the owner of {key}")
        if api.start(kind) != 0:
            since = api.releases[api.start(kind) or 0]
            return replace(base, reason=f"no {api.package} release since {since} has it, and older ones are not read for {kind.value}s")
        return replace(base, drift=Drift.NEVER, typo_of=_typo_of(api, kind, key))
    if base.question.missing is Missing.POSITIONAL and kind is ApiKind.PARAM:
        if installed is not None and _has(api, kind, key, present, installed) is False:
            return replace(base, drift=Drift.INSTALLED_HAS)  # a release without the parameter cannot require it
        return _positional(api, base, present)
    if installed is not None:
        has = _has(api, kind, key, present, installed)
        if isinstance(has, Unknown) and not (base.added_in and newer(base.added_in, installed)):
            return replace(base, reason=has.reason)  # unread, and not before what dates it (`_dated_by_init`)
        if has is True:
            return replace(base, drift=Drift.INSTALLED_HAS)
    elif base.removed_in is None and base.added_in is None:
        return replace(base, reason=f"every indexed {api.package} release has it")
    return None


def _params_unread(api: PackageApi, key: str, release: str) -> str | None:
    """Why a parameter's last release says nothing, when it says nothing: from `release` on the callable takes
    **kwargs, or its `__init__` is built where the index does not read it (vLLM 0.5.5 made SamplingParams a msgspec
    Struct; a base from another package): the index stores "**" for both, and an absent parameter is conclusive only
    where "**" is absent too."""
    head = key[: key.index("(") + 1]
    if api.has(ApiKind.PARAM, f"{head}**)", release) is not True:
        return None
    return f"from {release} on {head[:-1]} takes **kwargs or is built in a way the index does not read"


_TYPO_RATIO = 0.9
"""How alike a name must be to one a release has to read as a slip of the keyboard (difflib's ratio): `GRPOTrainr` is
0.95 from `GRPOTrainer`; `Qwen2_5_VLImageProcessor`, a development build's name, is 0.88 from `Qwen2_5_VLProcessor`."""


def _with_home(settled: ApiAnswer, source: ApiSource) -> ApiAnswer:
    """A top-level name no release of the callee had, looked up at the top level of the other indexed packages: one
    that exports it says the import names the wrong package (`from trl import TrainingArguments`), not a release."""
    module, _, name = (settled.key or "").partition(":")
    if settled.drift is not Drift.NEVER or settled.kind is not ApiKind.NAME or "." in module or not _PUBLIC.match(name):
        return settled
    for package in source.indexed():
        if package == settled.package:
            continue
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        for root in api.top_level or import_names(package):
            if api.present(ApiKind.NAME, f"{root}:{name}"):
                return replace(settled, home_of=f"{root}:{name}")
    return settled


_PUBLIC = re.compile(r"^[A-Za-z][A-Za-z0-9_]{3,}$")
"""A name worth looking up elsewhere: public and not a short common word."""


def _typo_of(api: PackageApi, kind: ApiKind, key: str) -> str | None:
    """The key of a name any release has in the same module (or class) that `key` is a slip of; None when none is.
    A name that differs only in its digits is another generation of a model family, not a typo."""
    if kind not in (ApiKind.NAME, ApiKind.MEMBER):
        return None
    cut = max(key.rfind(":"), key.rfind(".") if kind is ApiKind.MEMBER else -1) + 1
    prefix, name = key[:cut], key[cut:]
    keys = api.keys(kind)
    names = [k[cut:] for k in keys[bisect.bisect_left(keys, prefix):bisect.bisect_left(keys, prefix + "\U0010ffff")]
             if k.find(".", cut) < 0]
    import difflib  # only for a name a release lacks: every `compat explain` imports this module

    skeleton = re.sub(r"\d", "", name)
    for near in difflib.get_close_matches(name, names, n=3, cutoff=_TYPO_RATIO):
        if re.sub(r"\d", "", near) != skeleton:
            return prefix + near
    return None


def _has(api: PackageApi, kind: ApiKind, key: str, present: tuple[Span, ...], release: str) -> bool | Unknown:
    if kind is not ApiKind.SIGNATURE:
        return api.has(kind, key, release)
    i = api.position(kind, release)
    if isinstance(i, Unknown):
        return i
    return any(api.position(kind, s.first) <= i <= api.position(kind, s.last) for s in present)  # type: ignore[operator]


def _dated_by_init(api: PackageApi, base: ApiAnswer) -> ApiAnswer:
    """A member every release read for members has, dated by the same-named parameter of its class's __init__ (a
    config's fields), which every release is read for: `LlamaConfig.attention_dropout`, read from 4.36.0 on, is a
    parameter from 4.36.0 and the class is older, so 4.36.0 added it. A parameter older than the first release read
    for members dates nothing (`BertConfig.pad_token_id`, a parameter since 2.6.0: a 2025 log that lacks it is rarely a
    transformers older than that), nor one as old as the class."""
    start = api.start(ApiKind.MEMBER)
    if not base.present or not start or base.present[0].first != api.releases[start] or base.key is None:
        return base
    root, _, member = base.key.partition(":")
    cls, _, name = member.rpartition(".")
    param = api.present(ApiKind.PARAM, f"{root}:{cls}({name})")
    born = api.present(ApiKind.NAME, f"{root}:{cls}")
    if not param or not born or param[0].first != base.present[0].first or param[0].first == born[0].first:
        return base
    return replace(base, added_in=param[0].first)


def _member_known(api: PackageApi, base: ApiAnswer) -> ApiAnswer:
    """A member no release has is conclusive only when the class's bases are all read (the same package)."""
    if base.present or base.key is None or api.start(ApiKind.MEMBER) is None:
        return base
    cls = base.key.rpartition(".")[0]
    release = base.installed or api.releases[-1]
    bases = api.bases(cls, release)
    if isinstance(bases, Unknown):
        return replace(base, reason=bases.reason)
    outside = _outside_bases(api, cls, release)
    if outside:
        return replace(base, reason=f"{cls} inherits from {outside[0]}, whose members the index does not read")
    return base


def _inherited(q: ApiQuestion, api: PackageApi, base: ApiAnswer, facts: Facts | None, source: ApiSource,
               stated: Mapping[str, str] | None) -> ApiAnswer | None:
    """A member a class lacks, asked of its bases in other indexed packages (trl's GRPOTrainer of transformers'
    Trainer): the base's answer where some release of it has the member; else `base` with why the index cannot tell.
    None when no base outside the package is public and indexed."""
    cls = (base.key or "").rpartition(".")[0]
    releases = [r for r in (base.installed, *reversed(api.releases)) if r is not None]
    asked: list[str] = []
    for release in releases:
        for written in _outside_bases(api, cls, release):
            short = written.rpartition(".")[2]
            if short.startswith("_") or short in asked or len(asked) >= 3:
                continue
            asked.append(short)
            a = answer(replace(q, module=short), facts, source, stated)
            if a is None or a.package is None or a.package == api.package \
                    or not _imported_from(source, api, release, written, a.package):
                continue
            if a.present:
                return a
            return replace(base, reason=f"{cls} inherits from {short} ({a.package}), and no indexed {a.package} release has "
                                        f"{short}.{q.name} as a method or an attribute its __init__ sets (one set elsewhere is not read)")
    return None


def _imported_from(source: ApiSource, api: PackageApi, release: str, written: str, package: str) -> bool:
    """Whether the base `written` in `release` of `api` is `package`'s: the index answers a short name with the first
    package that exports it, and transformers' Adafactor subclasses torch's `Optimizer`, not deepspeed's. A dotted
    name says its package; a bare one is that package's where the release imports the name from it."""
    head, _, short = written.rpartition(".")
    if head and distribution_of(head.split(".")[0]) == package:
        return True
    edges = source.imports(api, release, package)
    return not isinstance(edges, Unknown) and any(e.name == short for e in edges)


def _outside_bases(api: PackageApi, cls: str, release: str, depth: int = 0) -> list[str]:
    """The bases of `cls` (and of its in-package bases) outside the package, in `release`."""
    bases = api.bases(cls, release)
    if isinstance(bases, Unknown) or depth > 12:
        return []
    out = [b for b in bases if ":" not in b]
    for b in bases:
        if ":" in b:
            out += _outside_bases(api, b, release, depth + 1)
    return out


def works(api: PackageApi, q: ApiQuestion, key: str) -> tuple[Span, ...]:
    """The releases whose signature of callable `key` accepts the call the question describes: `q.name`
    positional arguments (self counted, as Python counts it), or a call without argument `q.name`."""
    method = "." in key.partition(":")[2] or (q.module is not None and q.module.endswith(".__init__"))
    good: list[tuple[str, str]] = []
    for match in signatures_of(api, key):
        params = match.key[match.key.index("[") + 1:-1].split(",")
        if q.missing is Missing.POSITIONAL_COUNT:
            ok = "*args" in params or _capacity(params) + method >= int(q.name)
        elif q.name not in params and ("*args" in params or "**kwargs" in params):
            continue  # it may forward the call (a shim): this signature decides nothing
        else:
            ok = q.name not in params  # absent, or with a default ("name=")
        if ok:
            good += [(s.first, s.last) for s in match.present]
    indices = {i for first, last in good for i in range(api.releases.index(first), api.releases.index(last) + 1)}
    runs = decode_spans(encode_spans(indices)) if indices else ()
    return tuple(Span(first=api.releases[a], last=api.releases[b]) for a, b in runs)


def _capacity(params: list[str]) -> int:
    """How many positional arguments a signature takes (self not counted)."""
    count = 0
    for p in params:
        if p in ("*", "*args", "**kwargs"):
            break
        count += p not in ("/", "")
    return count


def _too_new(base: ApiAnswer) -> bool:
    """Whether the callee's release is past the key: the installed one when known, else the newest indexed."""
    if base.installed is not None:
        return newer(base.installed, base.present[-1].last)
    return base.removed_in is not None and base.added_in is None


def _callee_too_new(api: PackageApi, source: ApiSource, base: ApiAnswer, removed_in: str) -> ApiAnswer:
    fix = [f"{api.package}<{removed_in}"]
    caller_import = caller_fixed_in = None
    if base.kind in (ApiKind.NAME, ApiKind.MODULE) and base.caller is not None:
        caller_import, caller_fixed_in = _caller_side(source, base.caller, base.caller_installed, api.package, base.question)
        if caller_fixed_in is not None:
            fix.append(f"{base.caller}>={caller_fixed_in}")
    return replace(base, caller_import=caller_import, caller_fixed_in=caller_fixed_in, drift=Drift.CALLEE_TOO_NEW,
                   fix=tuple(fix))


def _callee_too_old(api: PackageApi, source: ApiSource, base: ApiAnswer) -> ApiAnswer:
    present, installed = base.present, base.installed
    span = next((s for s in present if installed is None or newer(s.first, installed)), present[-1])
    # Not knowing the installed release, a name that came and went bounds it on both sides: the fix is the range.
    upper = after(api, span.last) if span is not present[-1] else base.removed_in if installed is None else None
    fix = [f"{api.package}>={span.first}" + (f",<{upper}" if upper else "")]
    if installed is None and span is not present[-1]:
        # It came back later: the newest run of releases that have it is the other way out.
        fix.append(f"{api.package}>={present[-1].first}" + (f",<{base.removed_in}" if base.removed_in else ""))
    caller_import = None
    if base.kind in (ApiKind.NAME, ApiKind.MODULE) and base.caller is not None:
        caller_import, since = _caller_since(source, base.caller, base.caller_installed, api.package, base.question)
        if since is not None:
            fix.append(f"{base.caller}<{since}")
            base = replace(base, caller_since=since)
    if base.kind is ApiKind.SIGNATURE and base.question.missing is Missing.POSITIONAL_COUNT:
        since = _caller_call_since(api, source, base)
        if since is not None:
            fix.append(f"{base.caller}<{since}")
            base = replace(base, caller_since=since)
    return replace(base, caller_import=caller_import, caller_fixed_in=None, drift=Drift.CALLEE_TOO_OLD, fix=tuple(fix))


def _caller_call_since(api: PackageApi, source: ApiSource, base: ApiAnswer) -> str | None:
    """An override called with more arguments than it takes, by its base class in the caller's
    package (trl's DPOTrainer.log called by transformers' Trainer as `self.log(logs, start_time)`):
    the base calls its method the way its own signature reads, so the first caller release whose
    signature takes that many is the one that started the call; None when the installed caller is
    older, or the index cannot say."""
    if base.caller is None or base.key is None or base.caller_installed is None:
        return None
    caller = source.get(base.caller)
    if isinstance(caller, Unknown):
        return None
    cls, _, method = base.key.partition(":")[2].partition(".")
    bases = api.bases(f"{base.key.partition(':')[0]}:{cls}", base.installed or api.releases[-1])
    root = (caller.top_level or import_names(caller.package))[0]
    for written in () if isinstance(bases, Unknown) else bases:
        callable_key = f"{root}:{written.rsplit('.', 1)[-1]}.{method}"
        calls = works(caller, base.question, callable_key)
        if not calls or newer(calls[0].first, base.caller_installed):
            continue
        # the first release whose signatures are read says nothing about when the call started
        return calls[0].first if caller.releases.index(calls[0].first) > (caller.start(ApiKind.SIGNATURE) or 0) else None
    return None


def _positional(api: PackageApi, base: ApiAnswer, present: tuple[Span, ...]) -> ApiAnswer:
    # The callee requires an argument its caller does not pass: the releases before the parameter
    # existed are the ones that work (the index knows a parameter exists, not that it is required).
    if present[0].first == api.releases[0]:
        return replace(base, reason=f"every indexed {api.package} release since {api.releases[0]} has the parameter")
    return replace(base, drift=Drift.CALLEE_TOO_NEW, fix=(f"{api.package}<{present[0].first}",))


def _locate(q: ApiQuestion, source: ApiSource) -> tuple[PackageApi, ApiKind, str, bool] | None:
    """(callee index, kind, key, whether the index knows the owner of the key)."""
    if q.missing in (Missing.IMPORT_NAME, Missing.ATTRIBUTE, Missing.MODULE):
        assert q.module is not None
        api = source.get(distribution_of(q.module.split(".")[0]))
        if isinstance(api, Unknown):
            return None
        if q.missing is Missing.MODULE:
            parent = q.module.rsplit(".", 1)[0]
            return api, ApiKind.MODULE, q.module, bool(api.present(ApiKind.MODULE, parent))
        sub = f"{q.module}.{q.name}"
        if api.package in NATIVE_NAMES and api.present(ApiKind.MODULE, sub):
            # A submodule (`module 'torch' has no attribute 'compiler'`) is a file of the wheel, which the index reads
            # even where the package's names live in a C extension it cannot read.
            return api, ApiKind.MODULE, sub, True
        if q.known_only and not api.present(ApiKind.NAME, f"{q.module}:{q.name}"):
            return None  # a class a registry refused, asked on its shape: the program's own or a remote code's
        return api, ApiKind.NAME, f"{q.module}:{q.name}", bool(api.present(ApiKind.MODULE, q.module))
    if q.missing is Missing.MODEL_TYPE:
        return _locate_model_type(q, source)
    if q.missing is Missing.CLI_CHOICE:
        return _locate_cli(q, source)
    if q.missing is Missing.MEMBER:
        return _locate_member(q, source)
    return _locate_param(q, source)


def _locate_model_type(q: ApiQuestion, source: ApiSource) -> tuple[PackageApi, ApiKind, str, bool] | None:
    api = source.get(distribution_of(q.module or "transformers"))
    if isinstance(api, Unknown):
        return None
    if api.package != "transformers" and q.caller is not None and distribution_of(q.caller) == api.package \
            and re.fullmatch(r"[a-z][a-z0-9_]*", q.name):
        # A KeyError in a package's own lookup (explain/drift.py): a model type only where the package indexes the
        # model types it supports and transformers knows the key (a release of the package older than the model),
        # else data. vLLM's architecture questions name a CamelCase class and never reach here.
        known = source.get("transformers")
        if not api.keys(ApiKind.MODEL_TYPE) or isinstance(known, Unknown) or q.name not in known.keys(ApiKind.MODEL_TYPE):
            return None
    if q.known_only and q.name not in api.keys(ApiKind.MODEL_TYPE):
        return None
    return api, ApiKind.MODEL_TYPE, q.name, bool(api.keys(ApiKind.MODEL_TYPE))


def _locate_cli(q: ApiQuestion, source: ApiSource) -> tuple[PackageApi, ApiKind, str, bool] | None:
    prog = (q.module or "").split(" ")[0].lower()
    fallback = None
    for package in source.indexed():
        api = source.get(package)
        if isinstance(api, Unknown):
            continue
        scripts = [k for k in api.keys(ApiKind.CLI) if " " not in k]
        if prog in scripts:
            return api, ApiKind.CLI, f"{prog} {q.name}", True
        if fallback is None:
            key = next((k for k in api.keys(ApiKind.CLI) if k.endswith(f" {q.name}")), None)
            if key is not None:
                fallback = (api, ApiKind.CLI, key, True)
    return fallback


def _locate_member(q: ApiQuestion, source: ApiSource) -> tuple[PackageApi, ApiKind, str, bool] | None:
    assert q.module is not None
    for api, root in owners(q.module, q.caller, source):
        key = f"{root}:{q.module}.{q.name}"
        return api, ApiKind.MEMBER, key, api.start(ApiKind.MEMBER) is not None
    return None


_NAMED = frozenset({Missing.KEYWORD, Missing.POSITIONAL})
"""The call wordings that name the parameter they disagree on."""


def _locate_param(q: ApiQuestion, source: ApiSource) -> tuple[PackageApi, ApiKind, str, bool] | None:
    assert q.module is not None
    qual = q.module.removesuffix(".__init__")
    head = qual.split(".", 1)[0]
    # A capitalised head is a class a package may export at its top level; a function named alone is looked for there
    # only where its name is distinctive (callee_home), as a common one (`collate_fn`) is as often the program's own.
    first = next(owners(head, q.caller, source), None) if head[:1].isupper() else None
    param = q.name if q.missing in _NAMED else None
    found = (first[0], first[1], qual) if first is not None else callee_home(qual, q.caller, source, param)
    if found is None:
        return None
    api, root, qual = found
    shaped = q.missing is Missing.POSITIONAL_COUNT or (q.missing is Missing.POSITIONAL and api.start(ApiKind.SIGNATURE) is not None)
    if shaped and signatures_of(api, f"{root}:{qual}"):
        return api, ApiKind.SIGNATURE, f"{root}:{qual}", True
    if q.missing is Missing.POSITIONAL_COUNT:
        return None
    key = f"{root}:{qual}({q.name})"
    # A parameter no release has may still be taken by **kwargs or missed: never "no release has it".
    return api, ApiKind.PARAM, key, bool(api.present(ApiKind.PARAM, key))


def _caller_side(
    source: ApiSource, caller: str, installed: str | None, callee: str, q: ApiQuestion,
) -> tuple[ImportKind | None, str | None]:
    """How the installed caller imports the missing key, and its first newer release that does not."""
    api = source.get(caller)
    if isinstance(api, Unknown):
        return None, None

    def edge(release: str) -> ImportKind | None | Unknown:
        edges = source.imports(api, release, callee)
        if isinstance(edges, Unknown):
            return edges
        kinds = [e.kind for e in edges if _imports_it(e.target, e.name, q)]
        for k in (ImportKind.TOP_LEVEL, ImportKind.GUARDED, ImportKind.LAZY):
            if k in kinds:
                return k
        return None

    now = edge(installed) if installed is not None else None
    kind = None if isinstance(now, Unknown) else now
    later = [r for r in api.releases if installed is None or newer(r, installed)]
    if installed is None:
        # Without an installed release: the first release after the last that imported it.
        importing = [r for r in api.releases if edge(r) not in (None,)]
        if not importing:
            return None, None
        later = [r for r in api.releases if newer(r, importing[-1])]
    for r in later:
        if edge(r) is None:
            return kind, r
    return kind, None


def _caller_since(
    source: ApiSource, caller: str, installed: str | None, callee: str, q: ApiQuestion,
) -> tuple[ImportKind | None, str | None]:
    """How the installed caller imports the key, and the first caller release that imports it at all
    (None when the oldest indexed release already does: no older caller avoids it)."""
    api = source.get(caller)
    if isinstance(api, Unknown):
        return None, None

    def kind_in(release: str) -> ImportKind | None | Unknown:
        edges = source.imports(api, release, callee)
        if isinstance(edges, Unknown):
            return edges
        kinds = {e.kind for e in edges if _imports_it(e.target, e.name, q)}
        return next((k for k in (ImportKind.TOP_LEVEL, ImportKind.GUARDED, ImportKind.LAZY) if k in kinds), None)

    now = kind_in(installed) if installed is not None else None
    first = next((r for r in api.releases if isinstance(kind_in(r), ImportKind)), None)
    return (None if isinstance(now, Unknown) else now), (first if first is not None and first != api.releases[0] else None)


def _imports_it(target: str, name: str | None, q: ApiQuestion) -> bool:
    if q.missing is Missing.MODULE:
        return target == q.module or target.startswith(f"{q.module}.") or (name is not None and f"{target}.{name}" == q.module)
    return target == q.module and name == q.name


__all__ = ["answer", "distribution_of", "installed_version", "works"]
