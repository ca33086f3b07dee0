"""Links between releases: whether what one release imports from another tracked package exists in a
release of that package, answered from the API timeline (compat/timeline/index.py).

doctor asks it about the installed set, lock and plan about each pair of pinned releases. A link is
broken only where the index shows it: the imported name (or module) exists in some indexed release of
the provider but not in the one asked about. A name the index never saw (a private helper, a name
the extractor cannot read) and a release the index has not read decide nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.errors import MatrixError
from compat.model.unknown import Unknown
from compat.timeline.index import PackageApi, indexed_packages, load_api
from compat.timeline.records import ApiKind, BrokenLink, ImportEdge, ImportKind, Span

NATIVE_NAMES = frozenset({"torch"})
"""Packages whose public names are mostly defined in compiled code, where the index sees only some."""


_ON_DEMAND: tuple[tuple[str, str], ...] = (
    # vLLM's model registry imports a model's module only for the architecture being served, in a
    # child process that inspects it (vllm/model_executor/models/registry.py; vllm-project/vllm#24944).
    ("vllm.model_executor.models.", "loaded only for the model architecture that uses it"),
    # A model's own processor, named in a lazy table (_CLASS_TO_MODULE in the 0.19.1 wheel's
    # vllm/transformers_utils/processors/__init__.py) or imported by that model's module alone.
    ("vllm.transformers_utils.processors.", "loaded only for the model that uses that processor"),
    # transformers' _LazyModule imports a model's module on first use of one of its classes.
    ("transformers.models.", "loaded only when that model is used"),
    # Liger's ORPO trainer: only its own package (liger_kernel/transformers/trainer/__init__.py) imports it, and no
    # module of liger-kernel 0.1.0 - 0.8.x, trl or transformers imports that package (liger_kernel.transformers'
    # __getattr__ loads auto_model and monkey_patch alone): `import liger_kernel` never loads trl.
    ("liger_kernel.transformers.trainer.", "loaded only when LigerORPOTrainer is imported"),
    # Liger's per-model forwards: only its monkey_patch imports them, which liger_kernel.transformers imports lazily
    # from 0.5.7 (its __getattr__) and which trl and transformers load only with use_liger_kernel; the catalog's
    # liger-transformers-mismatch judges a script that turns the patches on (NeMo-RL ran 0.5.8 with transformers 4.53).
    ("liger_kernel.transformers.model.", "loaded only when Liger's patches for that model are applied"),
)


# transformers' TensorFlow, Keras and Flax modules (modeling_tf_utils, keras_callbacks, ...): PyTorch users never load them.
_OTHER_FRAMEWORK = re.compile(r"(^|_)(tf|flax|keras)(_|$)")


@functools.lru_cache(maxsize=4096)
def on_demand(module: str) -> str | None:
    """Why `module` does not load with its package (None when it may): its top-level imports break a
    model or an opt-in feature, not the package."""
    for prefix, why in _ON_DEMAND:
        if module.startswith(prefix):
            return why
    parts = module.split(".")
    if "experimental" in parts:
        return "an opt-in experimental module"
    if any(_OTHER_FRAMEWORK.search(part) for part in parts):
        return "loaded only with TensorFlow, Keras or Flax"
    return None


class ReleaseApi(Protocol):
    """What the link check reads of a package: the index (PackageApi), or one installed release read
    from its files (compat/sources/installed_api.py)."""

    package: str
    releases: tuple[str, ...]

    def present(self, kind: ApiKind, key: str) -> tuple[Span, ...]: ...

    def has(self, kind: ApiKind, key: str, release: str) -> bool | Unknown: ...

    def imports(self, release: str, other: str) -> tuple[ImportEdge, ...] | Unknown: ...


class ApiSource:
    """The API index of a matrix's directories (an overlay's package replaces the shipped one),
    each package read once; a corrupt or absent package is Unknown. `extra` answers for packages
    (or releases) the index lacks, e.g. the installed files."""

    def __init__(self, roots: Sequence[Path] | None = None, extra: dict[str, ReleaseApi] | None = None) -> None:
        if not roots:
            from compat.matrix import shipped_matrix_dir

            roots = (shipped_matrix_dir(),)
        self._roots = tuple(roots)
        self._loaded: dict[str, PackageApi | Unknown] = {}
        self._indexed: tuple[str, ...] | None = None
        self._known_names: frozenset[str] | None = None
        self._extra = {canonicalize_name(k): v for k, v in (extra or {}).items()}
        self._edges: dict[tuple[str, str, str], tuple[ImportEdge, ...] | Unknown] = {}
        self._startup: dict[tuple[str, str, str], tuple[ImportEdge, ...]] = {}
        self._releases: dict[tuple[str, str], ReleaseApi | Unknown] = {}
        # Keyed by the provider object's identity: the source holds every ReleaseApi it hands out.
        self._resolved: dict[tuple[int, str, str | None, str], bool | Unknown] = {}
        self._lacking: dict[tuple[int, str, str | None, bool], frozenset[str]] = {}
        self._may_break: dict[tuple[int, str, str, int, frozenset[ImportKind], bool], frozenset[str]] = {}
        self._asked: set[tuple[int, str, str, int, frozenset[ImportKind], bool]] = set()

    def get(self, package: str) -> PackageApi | Unknown:
        """The index of `package`; Unknown when it has none."""
        name = canonicalize_name(package)
        api = self._loaded.get(name)
        if api is None:
            api = Unknown(reason=f"{name} has no API index")
            # One listing of the index directories, not a file lookup per installed package (an
            # environment may hold 400,000, with names no file system takes).
            for root in reversed(self._roots) if name in self._known() else ():
                try:
                    found = load_api(name, root)
                except MatrixError as exc:
                    found = Unknown(reason=str(exc))
                if not isinstance(found, Unknown) and found.releases:  # an index none of whose releases could be read answers nothing
                    api = found
                    break
            self._loaded[name] = api
        return api

    def _known(self) -> frozenset[str]:
        if self._known_names is None:
            self._known_names = frozenset(self.indexed())
        return self._known_names

    def release(self, package: str, version: str) -> ReleaseApi | Unknown:
        """What answers for `version` of `package`: the index when it has read that release, else `extra`."""
        key = (canonicalize_name(package), version)
        found = self._releases.get(key)
        if found is None:
            found = self._releases[key] = self._release(package, version)
        return found

    def _release(self, package: str, version: str) -> ReleaseApi | Unknown:
        api = self.get(package)
        if not isinstance(api, Unknown) and _indexed(api, version):
            return api
        extra = self._extra.get(canonicalize_name(package))
        if extra is not None and _indexed(extra, version):
            return extra
        if isinstance(api, Unknown):
            return api
        return Unknown(reason=f"{api.package} {version} is not indexed")

    def imports(self, api: ReleaseApi, release: str, other: str) -> tuple[ImportEdge, ...] | Unknown:
        """`api.imports`, remembered (lock asks the same pair many times)."""
        key = (api.package, release, canonicalize_name(other))
        edges = self._edges.get(key)
        if edges is None:
            edges = self._edges[key] = api.imports(release, other)
        return edges


    def startup_imports(self, api: ReleaseApi, release: str, other: str, edges: tuple[ImportEdge, ...]) -> tuple[ImportEdge, ...]:
        """Of `edges` (`imports(api, release, other)`), those that run when the package is imported: top-level
        imports of modules that do not load on demand. Asked once per pair of releases while a lock searches."""
        key = (api.package, release, other)
        found = self._startup.get(key)
        if found is None:
            found = self._startup[key] = tuple(
                e for e in edges if e.kind is ImportKind.TOP_LEVEL and on_demand(e.module) is None)
        return found
    def resolves(self, edge: ImportEdge, provider: ReleaseApi, version: str) -> bool | Unknown:
        """`resolves`, remembered: lock asks the same imports of the same provider release for every
        release of the importer it tries."""
        key = (id(provider), edge.target, edge.name, version)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = resolves(edge, provider, version)
        return found

    def lacking(self, edge: ImportEdge, provider: ReleaseApi, breaking_only: bool) -> frozenset[str]:
        """The releases of `provider` that lack what `edge` imports (`resolves` is False; with `breaking_only`, not
        counting those where the name is `added_later`), every release answered at once: the same (module, name) is
        imported by most releases of the importer."""
        key = (id(provider), edge.target, edge.name, breaking_only)
        found = self._lacking.get(key)
        if found is None and isinstance(provider, PackageApi):
            found = self._lacking[key] = provider.derived(
                ("lacking", edge.target, edge.name, breaking_only), lambda: _lacking_indexed(edge, provider, breaking_only))
        if found is None:
            found = self._lacking[key] = frozenset(
                r for r in provider.releases if self.resolves(edge, provider, r) is False
                and not (breaking_only and _missing(edge, provider, r, r)[3]))
        return found

    def may_break(self, api: ReleaseApi, release: str, provider: ReleaseApi, edges: tuple[ImportEdge, ...],
                  kinds: frozenset[ImportKind], breaking_only: bool) -> frozenset[str]:
        """The releases of `provider` where at least one of `edges` (those of `kinds` that `release` of `api`
        imports from it) does not resolve (with `breaking_only`, other than a name added later); every other release
        has none of the broken links `broken_links` looks for: a lock asks about each release of the
        provider it tries, and most answer with one set lookup instead of a walk over the imports."""
        key = (id(api), release, provider.package, id(provider), kinds, breaking_only)
        found = self._may_break.get(key)
        if found is None:
            found = self._may_break[key] = frozenset().union(
                *(self.lacking(e, provider, breaking_only) for e in edges if e.kind in kinds))
        return found

    def asked_again(self, api: ReleaseApi, release: str, provider: ReleaseApi, kinds: frozenset[ImportKind],
                    breaking_only: bool) -> bool:
        """Whether `broken_links` asked about this importer release and provider before (this call is remembered)."""
        key = (id(api), release, provider.package, id(provider), kinds, breaking_only)
        if key in self._asked:
            return True
        self._asked.add(key)
        return False

    def indexed(self) -> tuple[str, ...]:
        """Every indexed package, sorted."""
        if self._indexed is None:
            self._indexed = tuple(sorted({p for root in self._roots for p in indexed_packages(root)}))
        return self._indexed


def _indexed(api: ReleaseApi, version: str) -> bool:
    if version in api.releases:
        return True
    try:
        wanted = Version(version)
        return any(Version(r) == wanted for r in api.releases)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return version in api.releases


def after(api: ReleaseApi, release: str) -> str | None:
    """The indexed release right after `release`."""
    i = api.releases.index(release)
    return api.releases[i + 1] if i + 1 < len(api.releases) else None


def newer(a: str, b: str) -> bool:
    """Whether version `a` is newer than `b` (False when either is not a version)."""
    try:
        return Version(a) > Version(b)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return False




def _keys(edge: ImportEdge) -> tuple[tuple[ApiKind, str], ...]:
    if edge.name is None:
        return ((ApiKind.MODULE, edge.target),)
    return ((ApiKind.NAME, f"{edge.target}:{edge.name}"), (ApiKind.MODULE, f"{edge.target}.{edge.name}"))


def resolves(edge: ImportEdge, provider: ReleaseApi, version: str) -> bool | Unknown:
    """Whether `version` of the provider has what `edge` imports; Unknown when the index cannot say
    (a private name, a key no indexed release has, a release that is not indexed)."""
    module = edge.target
    gone = edge.name is not None and provider.present(ApiKind.MODULE, module) and provider.has(ApiKind.MODULE, module, version) is False
    if gone:
        return False  # the module itself is gone: nothing can be imported from it
    if edge.name is not None and edge.name.startswith("_"):
        return Unknown(reason=f"{edge.name} is private: the index does not list it")
    if edge.name is not None and canonicalize_name(provider.package) in NATIVE_NAMES:
        # Most of torch's public names (torch.tensor, torch.float8_e4m3fn, ...) come from its C
        # extension at import time, some releases spell a few again in Python: an absence in the
        # index is no evidence. Its modules are files, and a module that is gone was answered above.
        if any(provider.has(k, key, version) is True for k, key in _keys(edge)):
            return True
        return Unknown(reason=f"{provider.package} defines most names in its C extension: the index cannot see {edge.name}")
    keys = [(k, key) for k, key in _keys(edge) if provider.present(k, key)]
    if not keys and getattr(provider, "conclusive_absence", False):
        # Read from the installed files: what they do not define is not there.
        answers = [provider.has(k, key, version) for k, key in _keys(edge)]
        return False if all(a is False for a in answers) else next((a for a in answers if isinstance(a, Unknown)), True)
    if not keys:
        return Unknown(reason=f"no indexed {provider.package} release has {edge.target}" + (f":{edge.name}" if edge.name else ""))
    unknown: Unknown | None = None
    for kind, key in keys:
        has = provider.has(kind, key, version)
        if has is True:
            return True
        if isinstance(has, Unknown):
            unknown = has
    return unknown if unknown is not None else False


def broken_links(
    source: ApiSource, importer: str, importer_version: str, provider: str, provider_version: str,
    kinds: frozenset[ImportKind] = frozenset(ImportKind), *, breaking_only: bool = False,
) -> tuple[BrokenLink, ...] | Unknown:
    """The imports of `importer_version` (of the given kinds) from `provider` that `provider_version`
    lacks, as far as the index shows; Unknown when either release cannot be read. `breaking_only`:
    only those that break importing the package (`BrokenLink.breaks_import`), the others not even looked up."""
    a = source.release(importer, importer_version)
    if isinstance(a, Unknown):
        return a
    b = source.release(provider, provider_version)
    if isinstance(b, Unknown):
        return b
    edges = source.imports(a, _spelled(a, importer_version), provider)
    if isinstance(edges, Unknown):
        return edges
    spelled = _spelled(b, provider_version)
    release = _spelled(a, importer_version)
    asked = source.startup_imports(a, release, provider, edges) if breaking_only else edges
    # The set of provider releases that may break pays off from the second question about the same importer release
    # (a lock tries many provider releases); a doctor asks once per pair, and the walk below answers one release alone.
    if spelled in b.releases and source.asked_again(a, release, b, kinds, breaking_only) and \
            spelled not in source.may_break(a, release, b, asked, kinds, breaking_only):
        return ()
    out: list[BrokenLink] = []
    seen: set[tuple[str, str | None]] = set()
    alternatives: dict[tuple[str, str | None], list[ImportEdge]] | None = None
    for edge in asked:
        if edge.kind not in kinds or (edge.target, edge.name) in seen:
            continue
        if source.resolves(edge, b, spelled) is not False:
            continue
        if alternatives is None:  # built once per pair, and only for a pair with an import that fails
            alternatives = {}
            for other in edges:
                alternatives.setdefault((other.module, other.name), []).append(other)
        if _has_fallback(source, edge, alternatives.get((edge.module, edge.name), ()), b, spelled):
            continue
        seen.add((edge.target, edge.name))
        kind, key, present, added_later = _missing(edge, b, spelled, provider_version)
        if breaking_only and added_later:
            continue
        out.append(BrokenLink(
            importer=a.package, importer_version=importer_version, edge=edge, provider=b.package,
            provider_version=provider_version, kind=kind, key=key, present=present,
            provider_fix=_provider_fix(source, b.package, present, provider_version),
            importer_fix=_importer_fix(source, a, importer_version, provider, edge),
            on_demand=on_demand(edge.module) if edge.kind is ImportKind.TOP_LEVEL else None,
            added_later=added_later,
        ))
    return tuple(out)


def _lacking_indexed(edge: ImportEdge, api: PackageApi, breaking_only: bool) -> frozenset[str]:
    """`ApiSource.lacking` over the index, from each key's spans at once: what `resolves` and `_missing` answer release
    by release, for every release (a lock asks it for each import of each importer release it tries, and a walk over
    a provider's 250 releases per import was a third of a hard lock). The index's releases are oldest first."""
    everything = range(len(api.releases))

    def covered(kind: ApiKind, key: str) -> set[int]:
        return {i for a, b in api.spans(kind, key) for i in range(a, b + 1)}

    module = covered(ApiKind.MODULE, edge.target) if edge.name is not None else set()
    lacking = {i for i in everything if i not in module} if edge.name is not None and module else set()
    private = edge.name is not None and edge.name.startswith("_")
    native = edge.name is not None and canonicalize_name(api.package) in NATIVE_NAMES
    keys = [(k, key) for k, key in _keys(edge) if api.spans(k, key)]
    if keys and not private and not native:  # those answer Unknown where the module is there: never False
        has = set().union(*(covered(k, key) for k, key in keys))
        lacking |= {i for i in everything if i not in has}
    if breaking_only and lacking:
        # `_missing`'s added_later: the missing key's every span begins after the release
        first = {(k, key): min((a for a, _ in api.spans(k, key)), default=None) for k, key in (*_keys(edge), (ApiKind.MODULE, edge.target))}
        fallback = next(((k, key) for k, key in _keys(edge) if api.spans(k, key)), _keys(edge)[0])
        later = set()
        for i in lacking:
            gone = edge.name is not None and i not in module
            start = first[(ApiKind.MODULE, edge.target) if gone else fallback]
            if start is not None and i < start:
                later.add(i)
        lacking -= later
    return frozenset(api.releases[i] for i in lacking)


def _missing(edge: ImportEdge, provider: ReleaseApi, spelled: str, version: str) -> tuple[ApiKind, str, tuple[Span, ...], bool]:
    """For an `edge` that `version` (`spelled` as the index does) of the provider lacks: the key that is missing,
    the releases that have it, and whether only newer releases do (`BrokenLink.added_later`)."""
    gone = edge.name is not None and provider.has(ApiKind.MODULE, edge.target, spelled) is False
    keys = _keys(edge)
    kind, key = (ApiKind.MODULE, edge.target) if gone else next(((k, key) for k, key in keys if provider.present(k, key)), keys[0])
    present = provider.present(kind, key)
    return kind, key, present, bool(present) and all(newer(s.first, version) for s in present)


def installed_set_links(source: ApiSource, installed: Mapping[str, str], *, feature_links: bool = False) -> Iterator[BrokenLink]:
    """The broken links between the releases of an installed set (`{package: version}`), every ordered pair of the
    packages the timeline can read: those that break importing a package; with `feature_links`, also those that break
    only a feature (guarded, lazy, on-demand imports). A name only newer provider releases have is never one
    (`BrokenLink.added_later`). Pairs the timeline cannot read decide nothing."""
    tracked = sorted(p for p in installed if not isinstance(source.release(p, installed[p]), Unknown))
    for importer in tracked:
        for provider in tracked:
            if provider == importer:
                continue
            links = broken_links(source, importer, installed[importer], provider, installed[provider])
            if isinstance(links, Unknown):
                continue
            for link in links:
                if not link.added_later and (link.breaks_import or feature_links):
                    yield link


def _has_fallback(source: ApiSource, edge: ImportEdge, same_name: Sequence[ImportEdge], provider: ReleaseApi, version: str) -> bool:
    """Whether the same module also imports the same name from elsewhere in the provider (`same_name`: its imports
    of that name), and that import may resolve: `try: from transformers.integrations import X except ImportError:
    from transformers.deepspeed import X` breaks nothing."""
    if edge.name is None:
        return False
    return any(other.target != edge.target and source.resolves(other, provider, version) is not False for other in same_name)


def _spelled(api: ReleaseApi, version: str) -> str:
    """`version` as the index spells it ("0.8" -> "0.8.0")."""
    if version in api.releases:
        return version
    try:
        wanted = Version(version)
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return version
    return next((r for r in api.releases if Version(r) == wanted), version)


def _provider_fix(source: ApiSource, provider: str, present: tuple[Span, ...], version: str) -> str | None:
    api = source.get(provider)
    if isinstance(api, Unknown) or not present:
        return None
    later = next((s for s in present if newer(s.first, version)), None)
    if later is None:
        removed = after(api, present[-1].last)
        return f"{provider}<{removed}" if removed else None
    upper = after(api, later.last) if later is not present[-1] else None
    return f"{provider}>={later.first}" + (f",<{upper}" if upper else "")


def _importer_fix(source: ApiSource, importer: ReleaseApi, version: str, provider: str, edge: ImportEdge) -> str | None:
    api = source.get(importer.package)
    if isinstance(api, Unknown):
        return None
    top_level = edge.kind is ImportKind.TOP_LEVEL
    # Kept with the index: every doctor of the process asks it again for the same pair, and the walk below reads
    # the imports of each newer release (a fifth of doctor's import-link check before it was kept).
    return api.derived(("importer-fix", version, canonicalize_name(provider), edge.target, edge.name, top_level),
                       lambda: _first_release_without(source, api, version, provider, (edge.target, edge.name), top_level))


def _first_release_without(source: ApiSource, api: PackageApi, version: str, provider: str,
                           key: tuple[str, str | None], top_level: bool) -> str | None:
    """The importer's first release newer than `version` that no longer imports `key` (target, name) from
    `provider` (a top-level import only counts as still there when it is still top-level)."""
    for release in api.releases:
        if not newer(release, version):
            continue
        imported = _imported_keys(source, api, release, provider)
        if isinstance(imported, Unknown):
            return None
        if key not in imported or (top_level and not imported[key]):
            return f"{api.package}>={release}"
    return None


def _imported_keys(source: ApiSource, api: PackageApi, release: str, provider: str) -> dict[tuple[str, str | None], bool] | Unknown:
    """What `release` imports from `provider`: (target, name) -> whether one of those imports is top-level."""
    edges = source.imports(api, release, provider)
    if isinstance(edges, Unknown):
        return edges

    def make() -> dict[tuple[str, str | None], bool]:
        keys: dict[tuple[str, str | None], bool] = {}
        for e in edges:
            keys[(e.target, e.name)] = keys.get((e.target, e.name), False) or e.kind is ImportKind.TOP_LEVEL
        return keys

    return api.derived(("imported-keys", release, canonicalize_name(provider)), make)


__all__ = ["NATIVE_NAMES", "ApiSource", "ReleaseApi", "after", "broken_links", "installed_set_links", "newer", "on_demand", "resolves"]
