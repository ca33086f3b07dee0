"""The records of the API timeline: what a key names, where it exists, how an import runs, and the
answers the timeline gives (a lookup, a broken link, an API drift, what a refresh did)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from compat.model.unknown import Unknown


class ApiKind(str, Enum):
    """What a key names."""

    MODULE = "module"
    NAME = "name"
    PARAM = "param"
    CLI = "cli"
    MODEL_TYPE = "model_type"
    MEMBER = "member"
    """A class's own public member: "transformers:Trainer.compute_loss" (inherited ones come from BASE)."""
    BASE = "base"
    """A class's base: "transformers:LlamaForCausalLM<transformers:LlamaPreTrainedModel" in the same
    package, "transformers:PreTrainedModel<torch.nn.Module" (dotted as written) outside it."""
    SIGNATURE = "signature"
    """A callable's whole signature: "transformers:Trainer.compute_loss[model,inputs,return_outputs=,num_items_in_batch=]"."""


LATE_KINDS = (ApiKind.MEMBER, ApiKind.BASE, ApiKind.SIGNATURE)
"""Kinds added to the index after its first build: a package's index may hold them only from a
release on (releases.json "since"); older releases are unknown for them, not absent."""


class ImportKind(str, Enum):
    """How an import runs."""

    TOP_LEVEL = "top_level"
    """At module level (or in a class body), unguarded: a failure breaks importing the module."""
    GUARDED = "guarded"
    """Inside try/except or an `if` at module level (availability or version checks)."""
    LAZY = "lazy"
    """Inside a function: runs only when it is called."""


@dataclass(frozen=True, kw_only=True)
class Span:
    """Consecutive indexed releases where a key exists."""

    first: str
    """The first release (inclusive)."""
    last: str
    """The last release (inclusive)."""


@dataclass(frozen=True, kw_only=True)
class ImportEdge:
    """One import of another tracked package by a module of a release."""

    module: str
    """The importing module ("trl.core")."""
    target: str
    """The imported module ("transformers", "transformers.generation")."""
    name: str | None
    """The name imported from it (`from target import name`); None for `import target`."""
    kind: ImportKind
    """Whether a failure breaks importing the module."""


@dataclass(frozen=True, kw_only=True)
class ApiMatch:
    """One key and where it exists."""

    kind: ApiKind
    key: str
    present: tuple[Span, ...]
    """Empty when the key exists in no indexed release."""


@dataclass(frozen=True, kw_only=True)
class ApiLookup:
    """The answer to `compat matrix api PACKAGE [NAME]`."""

    package: str
    query: str | None
    """The NAME asked about; None for the package's summary."""
    releases: tuple[str, ...]
    """The indexed releases, oldest first."""
    missing: tuple[tuple[str, str], ...]
    """Releases not indexed, with why."""
    counts: tuple[tuple[ApiKind, int], ...]
    """How many keys of each kind were ever present."""
    matches: tuple[ApiMatch, ...]
    """Best first: the exact key asked for (present or not), then the same name elsewhere."""
    signatures: tuple[ApiMatch, ...] = ()
    """For a method or parameter asked about: the callable's signatures, oldest first."""
    since: str | None = None
    """For a member asked about: the first release whose members are indexed (None: all are)."""


@dataclass(frozen=True, kw_only=True)
class ApiImports:
    """The answer to `compat matrix api PACKAGE==VERSION --imports OTHER`."""

    package: str
    release: str
    other: str
    edges: tuple[ImportEdge, ...] | Unknown


@dataclass(frozen=True, kw_only=True)
class BrokenLink:
    """An import of one release that the release of the other package does not provide."""

    importer: str
    """The importing distribution ("trl")."""
    importer_version: str
    edge: ImportEdge
    """The import: module, target, name, and whether it runs at import time."""
    provider: str
    """The imported distribution ("transformers")."""
    provider_version: str
    kind: ApiKind
    key: str
    """The index key that is missing ("transformers:top_k_top_p_filtering")."""
    present: tuple[Span, ...]
    """The provider releases where it exists."""
    provider_fix: str | None
    """A requirement on the provider under which the import resolves ("transformers<4.39.0")."""
    importer_fix: str | None
    """The first newer importer release that stops importing it ("trl>=0.8.0"); None when none does."""
    on_demand: str | None = None
    """For a top-level import: why its module does not load with the package (`on_demand`), if so."""
    added_later: bool = False
    """Every provider release that has it is newer than `provider_version`: the importer reaches for a
    newer provider's API. Its own requirements are what say whether it supports this provider at all
    (the requirements check judges them); where they admit it, the module that imports it is loaded
    only with a newer provider (peft 0.21.2's transformers-v5 weight conversion, for one), so this
    is no evidence that the package breaks. A name *removed* before `provider_version` is the
    evidence: an old release's open upper bound meeting a newer provider."""

    @property
    def breaks_import(self) -> bool:
        """An unguarded top-level import, in a module that loads with its package, of a name the provider
        removed: importing the package fails."""
        return self.edge.kind is ImportKind.TOP_LEVEL and self.on_demand is None and not self.added_later


class Missing(str, Enum):
    """What the message says is not there."""

    IMPORT_NAME = "import-name"
    MODULE = "module"
    ATTRIBUTE = "attribute"
    KEYWORD = "keyword"
    """An argument the callee does not accept."""
    POSITIONAL = "positional"
    """A required argument the caller does not pass."""
    MEMBER = "member"
    """An attribute of an object or class (`'Trainer' object has no attribute 'tokenizer'`)."""
    POSITIONAL_COUNT = "positional-count"
    """More positional arguments than the callee takes (`takes 3 positional arguments but 4 were given`)."""
    CLI_CHOICE = "cli-choice"
    MODEL_TYPE = "model-type"


class Drift(str, Enum):
    """Which side is wrong, as far as the index shows."""

    CALLEE_TOO_NEW = "callee-too-new"
    """The callee's release no longer has it (removed in a later release than the caller expects)."""
    CALLEE_TOO_OLD = "callee-too-old"
    """The callee's release does not have it yet."""
    NEVER = "never"
    """No indexed release of the callee ever had it: a typo (`typo_of`) or the program's own name when the program asks
    for it; from an installed package's import, a name of an unreleased build (`unreleased`)."""
    OVERRIDE = "override"
    """An override of a package's method (a subclass's: the program's or another package's) does not take the call that
    package's release makes on it: the override was written for the package's other releases."""
    INSTALLED_HAS = "installed-has"
    """The installed release contradicts the log (the callee has what the log says it lacks, or the package does not
    make the call the log shows): the log comes from another environment. Where the log alone decides, explain gives
    that answer instead, with `elsewhere` set (compat/timeline/overrides.py's `answer_call`)."""
    UNDECIDED = "undecided"
    """The index cannot say (see `reason`)."""


@dataclass(frozen=True, kw_only=True)
class ApiQuestion:
    """What one exception says is missing, and who asked."""

    missing: Missing
    name: str
    """The missing name, argument, subcommand or model type as the message spells it."""
    module: str | None
    """The module the message names ("transformers"), the callable's qualname for arguments
    ("TrainingArguments.__init__"), the script for a subcommand; None when not named."""
    caller: str | None
    """The top-level package of the innermost frame (import name, "trl"); None for the user's code."""
    base_of: str | None = None
    """For `super().__init__(...)` in a package's file, that file's module ("trl.trainer.grpo_trainer"): the callee is
    the base of the class the module defines, which the index resolves (compat/timeline/drift.py); module is then
    the bare "__init__"."""
    override_in: str | None = None
    """For a call a package's own method makes on its object (`self.training_step(...)` in transformers' trainer.py)
    that the callee refuses: the module of that frame ("transformers.trainer"). The callee is then an override of the
    package's method, and the call is the shape the package's own release gives it (compat/timeline/overrides.py)."""
    known_only: bool = False
    """Asked on the shape of the name alone (a KeyError printed with no frame, a class a registry refused): answered
    only where the index knows the name, so a data key or a remote code's class asks nothing and gets no answer."""


@dataclass(frozen=True, kw_only=True)
class ApiAnswer:
    """The index's answer to one question."""

    question: ApiQuestion
    package: str | None
    """The callee's distribution ("transformers"); None when the index knows no callee."""
    kind: ApiKind | None
    key: str | None
    """The index key looked up ("transformers:top_k_top_p_filtering")."""
    present: tuple[Span, ...]
    """Where the key exists; empty when it never does."""
    drift: Drift
    installed: str | None
    """The callee's installed version (from the facts); None when not known."""
    removed_in: str | None
    """The first indexed release after the key's last range; None when the newest has it."""
    added_in: str | None
    """The first release of the key's ranges when an older indexed release lacks it."""
    caller: str | None
    """The caller's distribution; None for the user's code."""
    caller_installed: str | None
    """The caller's installed version; None when not known."""
    caller_import: ImportKind | None
    """How the caller's installed release imports the key (top level, guarded, lazy); None when not known."""
    caller_fixed_in: str | None
    """The first caller release newer than the installed one that no longer imports the key."""
    fix: tuple[str, ...]
    """Requirements, each of which alone fixes it for this environment (callee first)."""
    caller_since: str | None = None
    """For a callee too old: the first caller release that imports the key (older ones do not)."""
    reason: str | None = None
    """Why the answer is undecided."""
    typo_of: str | None = None
    """For a key no release had: the key of a release's name it is one slip away from (NEVER only)."""
    home_of: str | None = None
    """For a top-level name no release of the callee had: the key of the same name at the top level of another
    indexed package ("transformers:TrainingArguments" for `from trl import TrainingArguments`), NEVER only."""
    elsewhere: str | None = None
    """The installed version of the package the log is about when that release contradicts the log: the answer is the
    log's alone, for the environment that ran it (a log pasted from a cluster node, or from before an upgrade)."""
    shadowed: str | None = None
    """The version the log itself reports for the package when that release contradicts the failure (it has the model
    type a `KeyError` says is missing): the process imported another release, an older install ahead of it on the path,
    and the answer is the index's alone, with no fix to install (the log says it has the release that would be one)."""

    @property
    def decided(self) -> bool:
        """Whether the index names the side at fault (or says the name never existed)."""
        return self.drift in (Drift.CALLEE_TOO_NEW, Drift.CALLEE_TOO_OLD, Drift.OVERRIDE, Drift.NEVER)

    @property
    def unreleased(self) -> bool:
        """No release ever had it, yet an installed package's import asks for it: that package was written against
        an unreleased build of the callee (a development build, a fork), which is the environment, not a typo. An
        attribute's or argument's "caller" is only the frame that raised (torch's Module.__getattr__ for any model),
        which says nothing of who asked, so only imports count."""
        return self.drift is Drift.NEVER and self.caller is not None and self.kind in (ApiKind.NAME, ApiKind.MODULE)


@dataclass(frozen=True, kw_only=True)
class ApiOutcome:
    """What a refresh did to one package's API index."""

    package: str
    releases: int
    """Releases indexed after the refresh."""
    added: int
    """Releases extracted by this refresh."""
    missing: int
    """Releases recorded as not indexed (no readable file)."""
    requests: int
    """HTTP requests this package cost."""
    seconds: float
    """Wall time spent on this package."""


PENDING = "pending: "
"""A release missing from an index with this reason is tried again by the next refresh (network trouble, the
time allowed ran out, or not reached yet); any other reason is settled."""


@dataclass(frozen=True, kw_only=True)
class ApiWanted:
    """A package explain needs the timeline of and the shipped index lacks (compat/explain/asked.py)."""

    package: str
    """Its distribution name, canonical ("pkgz")."""
    versions: tuple[str, ...] = ()
    """Releases the log states or the environment has installed: indexed first, with the releases around them."""
    keys: tuple[tuple[ApiKind, str], ...] = ()
    """The keys the log asks about (a name, a module): the releases where one appears or goes are narrowed down."""


class OnDemandOutcome(str, Enum):
    """What explain's on-demand indexing did for one package."""

    INDEXED = "indexed"
    """Releases were read from the package index in this run (into the cache)."""
    CACHED = "cached"
    """The cache of an earlier run answered; nothing was read from the package index."""
    UNKNOWN = "unknown"
    """No release of it is indexed: `reason` says why."""


@dataclass(frozen=True, kw_only=True)
class OnDemandIndex:
    """What explain did to answer for a package the shipped API index lacks."""

    package: str
    outcome: OnDemandOutcome
    releases: tuple[str, ...]
    """The releases its cached index holds after this run, oldest first."""
    added: int
    """Releases read from the package index in this run."""
    requests: int
    """HTTP requests sent for it in this run (0: the cache alone answered)."""
    seconds: float
    """Wall time spent on it."""
    reason: str | None = None
    """Why nothing is indexed, or what was left for a later run (the time budget, an unreadable file)."""
