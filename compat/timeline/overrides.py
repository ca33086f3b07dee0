"""A package calling a method on its own object that an override refuses: the other side of a call's drift.

`self.training_step(model, inputs, num_items_in_batch)` in transformers' trainer.py reaches whatever `training_step`
the object's class has. When the message says that method takes fewer arguments, or no such keyword, the method is an
override (a subclass's: the program's own, or another package's trainer), and the call is the one the installed
package's release makes: its own base method takes it, and the releases whose base method takes it are the releases
that make it. The override was written for the others. Looking the refused callee up by the name in the message would
answer the wrong side (GLiNER's subclass, itself named `Trainer`, would read as transformers' own method, and the fix
as a newer transformers when a newer one is what makes the call).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from compat.model.unknown import Unknown
from compat.timeline.drift import answer, installed_version, works
from compat.timeline.homes import distribution_of
from compat.timeline.index import PackageApi, decode_spans, encode_spans, import_names, signatures_of
from compat.timeline.links import ApiSource, after, newer
from compat.timeline.records import ApiAnswer, ApiKind, ApiQuestion, Drift, Missing, Span

if TYPE_CHECKING:
    from compat.model.facts import Facts


def answer_call(q: ApiQuestion, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None = None) -> ApiAnswer | None:
    """The timeline's answer to `q`; for a call a package makes on its own object, the override's side when the callee
    as named is no other indexed package's (trl's DPOTrainer.log, which the index reads, answers for itself).

    Where the installed release contradicts the log, the log comes from another environment (pasted from another
    machine, or from before an upgrade): the installed versions say nothing of it, and the log alone answers. Where the
    release the log reports contradicts it, the process ran another release than the one reported (`shadowed`)."""
    a = _answer_call(q, facts, source, stated)
    if a is None or a.drift is not Drift.INSTALLED_HAS:
        return a
    if facts is not None:
        alone = _answer_call(q, None, source, stated)
        if alone is not None and alone.decided:
            return replace(alone, elsewhere=a.installed)
        if alone is None or alone.drift is not Drift.INSTALLED_HAS:
            return a
        a = alone
    # The release the log itself reports has it: the process ran another one (an older install ahead of it on the
    # path, a report taken elsewhere), and the index alone says which side that one is on.
    bare = _answer_call(q, None, source, None)
    if bare is None or not bare.decided:
        return a
    return replace(bare, shadowed=a.installed, fix=())  # never "install" the release the log says it has


def _answer_call(q: ApiQuestion, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None) -> ApiAnswer | None:
    if q.override_in is None:
        a = answer(q, facts, source, stated)
        return a if a is not None or q.caller is not None else _named_base(q, facts, source, stated)
    plain = answer(replace(q, override_in=None), facts, source, stated)
    caller = distribution_of(q.override_in.split(".")[0])
    if plain is not None and (plain.decided or plain.drift is Drift.INSTALLED_HAS) and plain.package != caller:
        return plain
    return _override(q, caller, facts, source, stated) or plain


def _override(q: ApiQuestion, caller: str, facts: Facts | None, source: ApiSource,
              stated: Mapping[str, str] | None) -> ApiAnswer | None:
    api = source.get(caller)
    if isinstance(api, Unknown) or api.start(ApiKind.SIGNATURE) is None:
        return None
    method = (q.module or "").rpartition(".")[2]
    for key in _base_methods(api, q.override_in or "", method, (q.module or "").rpartition(".")[0]):
        present = _calling(api, q, key)
        if present:
            return _judged(api, q, key, present, installed_version(facts, caller) or (stated or {}).get(caller))
    return None


def _named_base(q: ApiQuestion, facts: Facts | None, source: ApiSource, stated: Mapping[str, str] | None) -> ApiAnswer | None:
    """A call refused by a method of a class no index knows, with no package frame to say who made it (an issue's
    title: `Qwen2VLGRPOVLLMTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'`): the
    class is a subclass named for its base, so the method is an override of the indexed class its name ends with
    (transformers' `Trainer`), and the releases whose own method takes the call are the ones that make it. A method
    no indexed release of the base takes the call in, or takes it in every release, answers nothing."""
    if q.missing not in (Missing.KEYWORD, Missing.POSITIONAL_COUNT) or not q.module or q.module.count(".") != 1:
        return None
    cls, method = q.module.split(".")
    if method.startswith("__"):
        return None  # a constructor's arguments are the class's own fields, not a hook its base calls
    for start in [i for i, c in enumerate(cls) if c.isupper() and i > 0]:
        for package in source.indexed():
            api = source.get(package)
            if isinstance(api, Unknown) or api.start(ApiKind.SIGNATURE) is None:
                continue
            key = f"{(api.top_level or import_names(package))[0]}:{cls[start:]}.{method}"
            if not signatures_of(api, key):
                continue
            present = _calling(api, q, key)
            if present:
                return _judged(api, q, key, present, installed_version(facts, package) or (stated or {}).get(package))
    return None


def _base_methods(api: PackageApi, module: str, method: str, named: str) -> list[str]:
    """The signature keys of `method` on the classes module `module` defines: the class the message names first, then
    the one named like the module (`Trainer` in trainer.py), then the others."""
    root = (api.top_level or import_names(api.package))[0]
    stem = module.rpartition(".")[2].replace("_", "").lower()
    keys = api.keys(ApiKind.NAME)
    prefix = f"{module}:"
    found = keys[bisect.bisect_left(keys, prefix):bisect.bisect_left(keys, prefix + "\U0010ffff")]
    names = [k[len(prefix):] for k in found if k[len(prefix):][:1].isupper()]
    names.sort(key=lambda n: (n != named, n.lower() != stem))
    return [f"{root}:{n}.{method}" for n in names if signatures_of(api, f"{root}:{n}.{method}")]


def _calling(api: PackageApi, q: ApiQuestion, key: str) -> tuple[Span, ...]:
    """The releases whose own method takes the call the message describes: those that make it. A keyword counts where
    the base method names it; a base that only forwards `**kwargs` says nothing of what its package passes."""
    if q.missing is Missing.POSITIONAL_COUNT:
        return works(api, q, key)
    if q.missing is not Missing.KEYWORD:
        return ()
    indices: set[int] = set()
    for match in signatures_of(api, key):
        params = match.key[match.key.index("[") + 1:-1].split(",")
        if q.name in params or f"{q.name}=" in params:
            for s in match.present:
                indices.update(range(api.releases.index(s.first), api.releases.index(s.last) + 1))
    runs = decode_spans(encode_spans(indices)) if indices else ()
    return tuple(Span(first=api.releases[a], last=api.releases[b]) for a, b in runs)


def _judged(api: PackageApi, q: ApiQuestion, key: str, present: tuple[Span, ...], installed: str | None) -> ApiAnswer:
    """The override's answer: the package's releases outside `present` are the ones the override fits."""
    first_read = api.releases[api.start(ApiKind.SIGNATURE) or 0]
    added_in = present[0].first if present[0].first != first_read else None
    removed_in = after(api, present[-1].last) if present[-1].last != api.releases[-1] else None
    base = ApiAnswer(question=q, package=api.package, kind=ApiKind.SIGNATURE, key=key, present=present,
                     drift=Drift.UNDECIDED, installed=installed, removed_in=removed_in, added_in=added_in, caller=None,
                     caller_installed=None, caller_import=None, caller_fixed_in=None, fix=())
    if installed is not None and not any(_within(api, installed, s) for s in present):
        why = f"the installed {api.package} {installed} does not make this call: the log comes from another environment"
        return replace(base, drift=Drift.INSTALLED_HAS, reason=why)
    fix = tuple(f for f in (f"{api.package}<{added_in}" if added_in else None,
                            f"{api.package}>={removed_in}" if removed_in else None) if f)
    if not fix:
        return replace(base, reason=f"every indexed {api.package} release makes this call: the override fits none of them")
    return replace(base, drift=Drift.OVERRIDE, fix=fix)


def _within(api: PackageApi, release: str, span: Span) -> bool:
    return not newer(span.first, release) and not newer(release, span.last)


__all__ = ["answer_call"]
