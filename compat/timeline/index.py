"""The API timeline: what each indexed release of a tracked package defines, and what it imports.

`compat matrix refresh --api` builds it from the code of every release's wheel (never installed or
imported, see compat/timeline/extract.py); this module reads it, lazily, one package and one kind
at a time.

The interface others code against:

- `load_api(package, base=None) -> PackageApi | Unknown`: reads `<base>/api/<package>/releases.json`
  only (base: the shipped matrix); Unknown when the package is not indexed.
- `PackageApi.package`, `PackageApi.releases` (indexed releases, oldest first, as strings).
- `PackageApi.present(kind, key) -> tuple[Span, ...]`: the inclusive release ranges where the key
  exists, over the indexed releases; empty when it never does.
- `PackageApi.has(kind, key, release) -> bool | Unknown`: Unknown when that release is not indexed.
- `PackageApi.imports(release, other) -> tuple[ImportEdge, ...] | Unknown`: what `release` imports
  from the tracked package `other` (a distribution name, "huggingface-hub").
- `PackageApi.keys(kind)`: every key of a kind (to search, e.g. a qualname in any module).

Keys by kind (`ApiKind`):

- MODULE: "trl.trainer.grpo_trainer".
- NAME: "<module>:<name>", a public name the module defines or re-exports ("transformers:Trainer",
  transformers' lazy `_import_structure`/`define_import_structure` names, `__all__`, the names a
  module `__getattr__` answers).
- PARAM: "<module>:<Qual>(<param>)" for functions and methods ("transformers:Trainer.get_train_sampler(dataset)"),
  "<module>:<Class>(<param>)" for a class's `__init__` parameters and dataclass fields
  ("trl:GRPOConfig(use_vllm)"). <module> is the shortest public module that exposes the callable
  (the package itself when it re-exports it). `*args` and `**kwargs` are stored as the params "*"
  and "**"; "**" is also stored for a class whose `__init__` comes from a base outside the package,
  so an absent parameter is conclusive only where "**" is absent too.
- CLI: "<script>" and "<script> <subcommand>" ("trl vllm-serve").
- MODEL_TYPE: transformers' model types ("qwen3"); the model types liger-kernel and peft support;
  the architectures vLLM supports ("Qwen3ForCausalLM").

Storage (schema 1), under matrix/api/<package>/:

- releases.json: {"schema": 1, "package", "top_level": [import names], "releases": [oldest first],
  "files": [the file read for each release], "missing": {release: why it is not indexed}}.
- <kind>.json.gz for each ApiKind value and "imports": one JSON object {key: spans}. Spans are
  indices into "releases", as "0-4,7,9-12" (inclusive). Import keys read
  "<module> <target module> <name or *> <top_level|guarded|lazy>". A table past 250 kB of JSON is split in
  files <kind>.<i>.json.gz of consecutive keys, `"shards": {kind: [first key of shard 1, of shard 2,
  ...]}`, so that a lookup parses one shard (transformers' parameters are megabytes of JSON) and
  neighbouring keys, which share their prefixes, still compress together.

`check_api_dir` (compat/timeline/index_check.py) validates a package directory and names the file and the key in its errors.
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.errors import MatrixError
from compat.model.unknown import Unknown
from compat.regular_file import MIB, read_regular
from compat.timeline.records import LATE_KINDS, ApiKind, ApiLookup, ApiMatch, ImportEdge, ImportKind, Span

T = TypeVar("T")

SCHEMA = 1
IMPORTS = "imports"
"""The file stem of the import graph."""

TOP_LEVEL_NAMES: dict[str, tuple[str, ...]] = {
    "huggingface-hub": ("huggingface_hub",),
    "flash-attn": ("flash_attn", "flash_attn_2_cuda"),
    "flashinfer-python": ("flashinfer",),
    "liger-kernel": ("liger_kernel",),
}
"""Import names of tracked packages whose distribution name is not their import name."""


def import_names(package: str) -> tuple[str, ...]:
    """The top-level modules a distribution installs (by its canonical name)."""
    name = canonicalize_name(package)
    return TOP_LEVEL_NAMES.get(name, (name.replace("-", "_"),))


_SPANS = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


def decode_spans(text: str) -> tuple[tuple[int, int], ...]:
    """"0-4,7" -> ((0, 4), (7, 7)); raises ValueError."""
    if not _SPANS.match(text):
        raise ValueError(f"not a list of release ranges: {text!r}")
    out = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        out.append((int(first), int(last or first)))
    return tuple(out)


def encode_spans(indices: Iterator[int] | list[int] | set[int] | frozenset[int]) -> str:
    """Sorted release indices -> "0-4,7"."""
    parts: list[str] = []
    start = prev = -2
    for i in sorted(indices):
        if i == prev + 1:
            prev = i
            continue
        if start >= 0:
            parts.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = i
    if start >= 0:
        parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


def shard_of(key: str, bounds: list[str] | tuple[str, ...]) -> int:
    """The shard of a kind's table that holds `key`: shards hold consecutive keys, `bounds` their first keys (after the first)."""
    return bisect.bisect_right(bounds, key)


def api_dir(base: Path | None = None) -> Path:
    """matrix/api of the shipped matrix (or of `base`)."""
    if base is None:
        from compat.matrix import shipped_matrix_dir

        base = shipped_matrix_dir()
    return base / "api"


class PackageApi:
    """One package's indexed API; each kind's file is read on first use."""

    def __init__(self, directory: Path, meta: dict[str, Any], label: str) -> None:
        self._dir = directory
        self._label = label
        self.package: str = meta["package"]
        """Canonical distribution name."""
        self.releases: tuple[str, ...] = tuple(meta["releases"])
        """Indexed releases, oldest first."""
        self.files: tuple[str, ...] = tuple(meta.get("files", ()))
        """The file read for each release."""
        self.missing: dict[str, str] = dict(sorted(dict(meta.get("missing", {})).items(), key=lambda kv: _order(kv[0])))
        """Releases that are not indexed, with why."""
        self.top_level: tuple[str, ...] = tuple(meta.get("top_level", ()))
        """The import names the package installs."""
        self._index = {r: i for i, r in enumerate(self.releases)}
        self._tables: dict[str, dict[str, str]] = {}
        self._shards: dict[str, list[str]] = dict(meta.get("shards", {}))
        # Decoded once: lock asks the same keys of every candidate release.
        self._decoded: dict[tuple[str, str], tuple[tuple[int, int], ...]] = {}
        self._import_rows: dict[tuple[str, ...], tuple[tuple[ImportEdge, tuple[tuple[int, int], ...]], ...]] = {}
        self._imports_asked: set[tuple[str, ...]] = set()
        self._keys_by_root: dict[str, list[tuple[int, str, str]]] | None = None
        self._present: dict[tuple[ApiKind, str], tuple[Span, ...]] = {}
        self.since: dict[str, str] = dict(meta.get("since", {}))
        """For the kinds added late (`LATE_KINDS`): the first release from which they are indexed."""
        self._bases: dict[str, tuple[tuple[str, tuple[tuple[int, int], ...]], ...]] | None = None
        self._members: dict[str, frozenset[int]] = {}
        self._derived: dict[Hashable, Any] = {}

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """`make()`, kept with this index under `key`: an answer computed from the index alone (what a release
        imports, which releases lack a name) is the same for every doctor and lock of the process, and the shipped
        index is read once per process."""
        try:
            return cast(T, self._derived[key])
        except KeyError:
            found = self._derived[key] = make()
            return found

    def _shard(self, stem: str, shard: int) -> dict[str, str]:
        name = f"{stem}.{shard}" if stem in self._shards else stem
        table = self._tables.get(name)
        if table is None:
            path = self._dir / f"{name}.json.gz"
            table = _read_table(path, f"{self._label}/{name}.json.gz") if path.is_file() else {}
            self._tables[name] = table
        return table

    def _table(self, stem: str) -> dict[str, str]:
        """Every key of a kind (all its shards)."""
        count = len(self._shards.get(stem, ())) + 1
        if count == 1:
            return self._shard(stem, 0)
        merged: dict[str, str] = {}
        for i in range(count):
            merged.update(self._shard(stem, i))
        return merged

    def _get(self, stem: str, key: str) -> str | None:
        """One key's spans, reading only the shard that holds it."""
        return self._shard(stem, shard_of(key, self._shards.get(stem, ()))).get(key)

    def keys(self, kind: ApiKind) -> tuple[str, ...]:
        """Every key of a kind ever present, sorted (once: explain looks keys up by prefix many times)."""
        return self.derived(("keys", kind), lambda: tuple(sorted(self._table(kind.value))))

    def _spans(self, stem: str, key: str) -> tuple[tuple[int, int], ...]:
        spans = self._decoded.get((stem, key))
        if spans is None:
            text = self._get(stem, key)
            spans = self._decoded[(stem, key)] = decode_spans(text) if text else ()
        return spans

    def spans(self, kind: ApiKind, key: str) -> tuple[tuple[int, int], ...]:
        """Inclusive ranges of positions in `releases` where `key` exists; empty when it never does."""
        return self._spans(kind.value, key)

    def present(self, kind: ApiKind, key: str) -> tuple[Span, ...]:
        """Inclusive ranges of indexed releases where `key` exists; empty when it never does.

        A MEMBER is present where the class has it or inherits it from a base of the same package."""
        found = self._present.get((kind, key))
        if found is None:
            # Asked for each import of every release pair a lock tries: the spans are built once per key.
            spans = _runs(self._member(key)) if kind is ApiKind.MEMBER else self._spans(kind.value, key)
            found = self._present[(kind, key)] = tuple(Span(first=self.releases[a], last=self.releases[b]) for a, b in spans)
        return found

    def start(self, kind: ApiKind) -> int | None:
        """The index of the first release whose keys of `kind` are recorded; None when none are."""
        if kind not in LATE_KINDS:
            return 0
        first = self.since.get(kind.value)
        if first is not None:
            return self._index.get(first)
        built = (self._dir / f"{kind.value}.json.gz").is_file() or kind.value in self._shards
        return 0 if built else None  # an index written before the kind existed has no file of it

    def bases(self, cls: str, release: str) -> tuple[str, ...] | Unknown:
        """The bases of class `cls` ("transformers:Trainer") in `release`: "module:Name" within the
        package, the dotted name as written for one outside it (whose members the index does not read)."""
        i = self._release_index(release)
        if isinstance(i, Unknown):
            return i
        return tuple(b for b, spans in self._base_table().get(cls, ()) if any(a <= i <= z for a, z in spans))

    def _base_table(self) -> dict[str, tuple[tuple[str, tuple[tuple[int, int], ...]], ...]]:
        if self._bases is None:
            table: dict[str, list[tuple[str, tuple[tuple[int, int], ...]]]] = {}
            for key, text in self._table(ApiKind.BASE.value).items():
                cls, _, base = key.partition("<")
                table.setdefault(cls, []).append((base, decode_spans(text)))
            self._bases = {k: tuple(v) for k, v in table.items()}
        return self._bases

    def _member(self, key: str, depth: int = 0) -> frozenset[int]:
        """The releases where class member `key` ("pkg:Cls.name") exists, inherited from in-package bases included."""
        found = self._members.get(key)
        if found is not None:
            return found
        cls, _, name = key.rpartition(".")
        out = {i for a, b in self._spans(ApiKind.MEMBER.value, key) for i in range(a, b + 1)}
        self._members[key] = frozenset(out)  # a cycle of bases sees what is found so far
        for base, spans in self._base_table().get(cls, ()):
            if ":" in base and depth < 12:
                inherited = self._member(f"{base}.{name}", depth + 1)
                out |= {i for a, b in spans for i in range(a, b + 1) if i in inherited}
        found = self._members[key] = frozenset(out)
        return found

    def _release_index(self, release: str) -> int | Unknown:
        i = self._index.get(release)
        if i is None:
            try:
                wanted = Version(release)
            except ValueError:  # InvalidVersion, or a number longer than int() reads
                return Unknown(reason=f"{release!r} is not a version")
            i = next((j for j, r in enumerate(self.releases) if Version(r) == wanted), None)
        if i is None:
            why = self.missing.get(release, "not a release the index has read")
            return Unknown(reason=f"{self.package} {release} is not indexed ({why})")
        return i

    def position(self, kind: ApiKind, release: str) -> int | Unknown:
        """The index of `release` among the releases; Unknown when it is not indexed, or not for `kind`."""
        i = self._release_index(release)
        if isinstance(i, Unknown):
            return i
        start = self.start(kind)
        if start is None or i < start:
            since = f"since {self.since[kind.value]}" if start is not None else "for no release"
            return Unknown(reason=f"{self.package}'s {kind.value} keys are indexed {since}, not for {release}")
        return i

    def has(self, kind: ApiKind, key: str, release: str) -> bool | Unknown:
        """Whether `key` exists in `release`; Unknown when that release is not indexed (for `kind`)."""
        i = self.position(kind, release)
        if isinstance(i, Unknown):
            return i
        if kind is ApiKind.MEMBER:
            return i in self._member(key)
        return any(a <= i <= b for a, b in self._spans(kind.value, key))

    def imports(self, release: str, other: str) -> tuple[ImportEdge, ...] | Unknown:
        """What `release` imports from the tracked package `other`, sorted by module."""
        i = self._release_index(release)
        if isinstance(i, Unknown):
            return i
        roots = import_names(other)

        def at_release() -> tuple[ImportEdge, ...]:
            if roots in self._import_rows or roots in self._imports_asked:
                out = [edge for edge, spans in self._imports(roots) if any(a <= i <= b for a, b in spans)]
            else:
                # The first release asked about: its rows alone are made edges (a doctor asks one release of each
                # package); a second release asked (a lock's search) makes every row's edge once, for all.
                self._imports_asked.add(roots)
                out = [_edge(key) for _, key, text in self._rows_from(roots) if _covers(text, i)]
            return tuple(sorted(out, key=lambda e: (e.module, e.target, e.name or "", e.kind.value)))

        return self.derived(("imports", i, roots), at_release)

    def _imports(self, roots: tuple[str, ...]) -> tuple[tuple[ImportEdge, tuple[tuple[int, int], ...]], ...]:
        """The rows of the import table that import from `roots`, with their decoded spans, read once."""
        rows = self._import_rows.get(roots)
        if rows is None:
            rows = self._import_rows[roots] = tuple((_edge(key), decode_spans(text)) for _, key, text in self._rows_from(roots))
        return rows

    def _rows_from(self, roots: tuple[str, ...]) -> list[tuple[int, str, str]]:
        """The import table's (position, key, spans) that import from `roots`, in the table's order."""
        by_root = self._import_keys_by_root()
        return sorted((row for root in set(roots) for row in by_root.get(root, ())), key=lambda row: row[0])

    def _import_keys_by_root(self) -> dict[str, list[tuple[int, str, str]]]:
        """The import table's (position, key, spans) grouped by the top-level module imported, read once: doctor asks
        what a release imports from each other installed package, and a pass over the whole table per package pair
        was most of its time."""
        if self._keys_by_root is None:
            grouped: dict[str, list[tuple[int, str, str]]] = {}
            for position, (key, text) in enumerate(self._table(IMPORTS).items()):
                target = key.split(" ", 2)[1]
                grouped.setdefault(target.split(".", 1)[0], []).append((position, key, text))
            self._keys_by_root = grouped
        return self._keys_by_root




_OTHER_MATCHES = 20


def _covers(spans: str, i: int) -> bool:
    """Whether encoded `spans` ("0-4,7") include release `i`, without building them (`decode_spans`' answer;
    raises ValueError on text that is not spans)."""
    for part in spans.split(","):
        first, _, last = part.partition("-")
        if int(first) <= i <= int(last or first):
            return True
    return False


def _edge(key: str) -> ImportEdge:
    """An import table key, "<module> <target module> <name or *> <kind>", as its edge."""
    module, target, name, kind = key.split(" ")
    return ImportEdge(module=module, target=target, name=None if name == "*" else name, kind=ImportKind(kind))


def _runs(indices: frozenset[int]) -> tuple[tuple[int, int], ...]:
    """Sorted indices as inclusive runs: {0, 1, 2, 5} -> ((0, 2), (5, 5))."""
    return decode_spans(encode_spans(indices)) if indices else ()


def lookup(api: PackageApi, query: str | None) -> ApiLookup:
    """Where a name, parameter, subcommand, module or model type exists, as release ranges.

    The query is a key of any kind, or a short form: "top_k_top_p_filtering" (a name of the package
    itself, then of any module), "Trainer.get_train_sampler(dataset)", "cli:vllm-serve",
    "model_type:qwen3", "module:trl.trainer".
    """
    counts = tuple((kind, len(api._table(kind.value))) for kind in ApiKind)
    base = ApiLookup(
        package=api.package,
        query=query,
        releases=api.releases,
        missing=tuple(api.missing.items()),
        counts=counts,
        matches=(),
    )
    if query is None:
        return base
    candidates = _candidates(api, query.strip())
    matches = [ApiMatch(kind=k, key=key, present=api.present(k, key)) for k, key in candidates]
    first_kind, first_key = candidates[0]
    signatures: tuple[ApiMatch, ...] = ()
    if first_kind in (ApiKind.MEMBER, ApiKind.PARAM):
        signatures = signatures_of(api, first_key.split("(", 1)[0])
    since = api.since.get(ApiKind.MEMBER.value) if first_kind is ApiKind.MEMBER else None
    return ApiLookup(**{**base.__dict__, "matches": tuple(matches), "signatures": signatures, "since": since})


def signatures_of(api: PackageApi, callable_key: str) -> tuple[ApiMatch, ...]:
    """The signatures a callable ("transformers:Trainer.compute_loss") had, oldest first."""
    head = f"{callable_key}["
    keys = api.keys(ApiKind.SIGNATURE)
    found = [ApiMatch(kind=ApiKind.SIGNATURE, key=key, present=api.present(ApiKind.SIGNATURE, key))
             for key in keys[bisect.bisect_left(keys, head):bisect.bisect_left(keys, head + "\U0010ffff")]]
    return tuple(sorted((m for m in found if m.present), key=lambda m: api._index[m.present[0].first]))


def _candidates(api: PackageApi, query: str) -> list[tuple[ApiKind, str]]:
    root = (api.top_level or import_names(api.package))[0]
    prefix, sep, rest = query.partition(":")
    if sep and prefix in ("cli", "model_type", "module", "name", "param", "member"):
        kind = {"cli": ApiKind.CLI, "model_type": ApiKind.MODEL_TYPE, "module": ApiKind.MODULE,
                "name": ApiKind.NAME, "param": ApiKind.PARAM, "member": ApiKind.MEMBER}[prefix]
        if kind is ApiKind.CLI and " " not in rest:
            scripts = [k for k in api._table(ApiKind.CLI.value) if " " not in k]
            main = next((s for s in scripts if s in (api.package, root)), scripts[0] if scripts else api.package)
            return [(kind, rest if rest in scripts else f"{main} {rest}")]
        if kind in (ApiKind.NAME, ApiKind.PARAM, ApiKind.MEMBER) and ":" not in rest:
            return _candidates(api, rest)
        return [(kind, rest)]
    if sep and not prefix.isidentifier() and "." not in prefix:
        return [(ApiKind.CLI, query)]
    if sep:
        return [(ApiKind.PARAM if "(" in rest else ApiKind.MEMBER if "." in rest else ApiKind.NAME, query)]
    if " " in query:
        return [(ApiKind.CLI, query)]
    kind = ApiKind.PARAM if "(" in query else ApiKind.MEMBER if "." in query else ApiKind.NAME
    if kind is ApiKind.NAME and api._get(ApiKind.MODULE.value, query) is not None:
        return [(ApiKind.MODULE, query)]
    if kind is ApiKind.NAME and query in api._table(ApiKind.MODEL_TYPE.value) and f"{root}:{query}" not in api._table(kind.value):
        return [(ApiKind.MODEL_TYPE, query)]
    exact = f"{root}:{query}"
    out = [(kind, exact)]
    suffix = f":{query}"
    others = sorted(k for k in api._table(kind.value) if k.endswith(suffix) and k != exact)
    out += [(kind, k) for k in others[:_OTHER_MATCHES]]
    return out


def _order(release: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(release))
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return (1, release)


MAX_BYTES = 64 * MIB
"""The largest shipped table is a quarter of a MiB decompressed; an overlay's file past this (a gzip bomb) is refused."""


def _read_table(path: Path, label: str) -> dict[str, str]:
    try:
        # read_regular: an overlay's FIFO would block a plain read; the decompressed size is bounded too
        unpacked = zlib.decompressobj(wbits=31)
        raw = unpacked.decompress(read_regular(path, limit=MAX_BYTES), MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise MatrixError(label, "", f"unreadable (larger than {MAX_BYTES // MIB} MiB decompressed)")
        data = json.loads(raw)
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise MatrixError(label, "", f"unreadable ({exc})") from exc
    except RecursionError:
        raise MatrixError(label, "", "unreadable (nested too deeply)") from None
    if not isinstance(data, dict):
        raise MatrixError(label, "", "not a JSON object")
    return data


def _read_meta(path: Path, label: str) -> dict[str, Any]:
    try:
        meta = json.loads(read_regular(path, limit=MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise MatrixError(label, "", f"unreadable ({exc})") from exc
    except RecursionError:
        raise MatrixError(label, "", "unreadable (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise MatrixError(label, "", "not a JSON object")
    if meta.get("schema") != SCHEMA:
        raise MatrixError(label, "schema", f"expected {SCHEMA}, found {meta.get('schema')!r}")
    if not isinstance(meta.get("package"), str):
        raise MatrixError(label, "package", "missing")
    releases = meta.get("releases")
    if not isinstance(releases, list) or not all(isinstance(r, str) for r in releases):
        raise MatrixError(label, "releases", "not a list of strings")
    return meta


def load_api(package: str, base: Path | None = None) -> PackageApi | Unknown:
    """One package's API index (its kinds load on first use); Unknown when the package is not indexed.

    `base` is a matrix directory (default: the shipped one). Raises MatrixError on a corrupt file.
    """
    from compat.matrix.releases import file_stem

    name = file_stem(package)
    if name is None:
        return Unknown(reason="not a package name, so no API index")
    directory = api_dir(base) / name
    path = directory / "releases.json"
    if not path.is_file():
        return Unknown(reason=f"{name} has no API index")
    label = f"matrix/api/{name}"
    if directory.parent != api_dir():  # an overlay's index: read as it is now, and named by its own path
        return PackageApi(directory, _read_meta(path, f"{directory}/releases.json"), str(directory))
    stamp = path.stat()
    key = (str(directory), stamp.st_mtime_ns, stamp.st_size)
    api = _SHIPPED.get(key)
    if api is None:
        api = _SHIPPED[key] = PackageApi(directory, _read_meta(path, f"{label}/releases.json"), label)
    return api


_SHIPPED: dict[tuple[str, int, int], PackageApi] = {}
"""The shipped index's packages, one object per process: what it read and decoded serves every later call of a library
caller (doctor, lock, explain), not only one. Keyed by its directory and releases.json's time and size (a refresh rewrites it)."""


def indexed_packages(base: Path | None = None) -> tuple[str, ...]:
    """The packages with an API index."""
    root = api_dir(base)
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if (p / "releases.json").is_file()))


__all__ = [
    "IMPORTS",
    "SCHEMA",
    "PackageApi",
    "api_dir",
    "decode_spans",
    "encode_spans",
    "import_names",
    "indexed_packages",
    "load_api",
    "lookup",
    "shard_of",
]
