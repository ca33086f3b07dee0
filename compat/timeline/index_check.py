"""The API index's validation (`compat matrix validate`, `compat matrix refresh --api`): every problem of one
package's directory under matrix/api, each naming its file and key. The format is compat/timeline/index.py's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from packaging.version import Version

from compat.errors import MatrixError
from compat.timeline.index import IMPORTS, _read_meta, _read_table, decode_spans, shard_of
from compat.timeline.records import LATE_KINDS, ApiKind

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = rf"{_IDENT}(\.{_IDENT})*"
_PARAM = rf"({_IDENT}=?|/|\*|\*args|\*\*kwargs)"
_KEY_SHAPES = {
    ApiKind.MODULE: re.compile(rf"^{_MODULE}$"),
    ApiKind.NAME: re.compile(rf"^{_MODULE}:{_IDENT}$"),
    ApiKind.PARAM: re.compile(rf"^{_MODULE}:{_IDENT}(\.{_IDENT})*\(({_IDENT}|\*|\*\*)\)$"),
    ApiKind.CLI: re.compile(r"^[\w.-]+( [\w.:-]+)?$"),
    ApiKind.MODEL_TYPE: re.compile(r"^[\w.-]+$"),
    ApiKind.MEMBER: re.compile(rf"^{_MODULE}:{_IDENT}\.{_IDENT}$"),
    ApiKind.BASE: re.compile(rf"^{_MODULE}:{_IDENT}<{_MODULE}(:{_IDENT})?$"),
    ApiKind.SIGNATURE: re.compile(rf"^{_MODULE}:{_IDENT}(\.{_IDENT})?\[({_PARAM}(,{_PARAM})*)?\]$"),
}
_IMPORT_KEY = re.compile(rf"^{_MODULE} {_MODULE} ({_IDENT}|\*) (top_level|guarded|lazy)$")


def check_api_dir(directory: Path, label: str) -> list[str]:
    """Every problem of one package's API directory, as "file: key: message". A process that validates the same files
    again (a validation beside a load, `compat matrix validate` after an overlay's, the suite) checks them once: the
    answer is kept under the name, size and modification time of every file in the directory."""
    stamp = _stamp(directory)
    if stamp is None:
        return _problems(directory, label)
    key = (str(directory), label, stamp)
    if key not in _CHECKED:
        _CHECKED[key] = tuple(_problems(directory, label))
    return list(_CHECKED[key])


_CHECKED: dict[tuple[str, str, tuple[tuple[str, int, int], ...]], tuple[str, ...]] = {}


def _stamp(directory: Path) -> tuple[tuple[str, int, int], ...] | None:
    try:
        return tuple((p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in sorted(directory.iterdir()))
    except OSError:
        return None


def _problems(directory: Path, label: str) -> list[str]:
    problems: list[str] = []
    try:
        meta = _read_meta(directory / "releases.json", f"{label}/releases.json")
    except MatrixError as exc:
        return [str(exc)]
    releases = meta["releases"]
    try:
        versions = [Version(r) for r in releases]
    except ValueError as exc:  # InvalidVersion, or a number longer than int() reads
        return [str(MatrixError(f"{label}/releases.json", "releases", str(exc)))]
    if versions != sorted(versions) or len(set(versions)) != len(versions):
        problems.append(str(MatrixError(f"{label}/releases.json", "releases", "not sorted oldest first without repeats")))
    if meta["package"] != directory.name:
        found = f"{meta['package']!r} in the directory of {directory.name!r}"
        problems.append(str(MatrixError(f"{label}/releases.json", "package", found)))
    files = meta.get("files", [])
    if not isinstance(files, list) or len(files) != len(releases):
        problems.append(str(MatrixError(f"{label}/releases.json", "files", "not one file per release")))
    if not isinstance(meta.get("missing", {}), dict):
        problems.append(str(MatrixError(f"{label}/releases.json", "missing", "not an object")))
    problems.extend(_check_since(meta, label))
    stems = [k.value for k in ApiKind] + [IMPORTS]
    shards = meta.get("shards", {})
    if not isinstance(shards, dict) or not all(
        k in stems and isinstance(v, list) and v and all(isinstance(b, str) for b in v) and v == sorted(set(v))
        for k, v in shards.items()
    ):
        problems.append(str(MatrixError(f"{label}/releases.json", "shards", "not {kind: [sorted first keys]}")))
        shards = {}
    files_of = {stem: [f"{stem}.{i}" for i in range(len(shards[stem]) + 1)] if stem in shards else [stem] for stem in stems}
    allowed = {f"{name}.json.gz" for names in files_of.values() for name in names}
    for path in sorted(directory.iterdir()):
        if path.name != "releases.json" and path.name not in allowed:
            problems.append(str(MatrixError(f"{label}/{path.name}", "", "not a file of the API index")))
    for stem in stems:
        for i, name in enumerate(files_of[stem]):
            path = directory / f"{name}.json.gz"
            if not path.is_file():
                if stem in shards:
                    problems.append(str(MatrixError(f"{label}/{name}.json.gz", "", "missing shard")))
                continue
            file = f"{label}/{name}.json.gz"
            try:
                table = _read_table(path, file)
            except MatrixError as exc:
                problems.append(str(exc))
                continue
            problems.extend(_check_table(table, stem, file, len(releases), (i, shards.get(stem, []))))
    return problems


def _check_since(meta: dict[str, Any], label: str) -> list[str]:
    since = meta.get("since", {})
    late = {k.value for k in LATE_KINDS}
    if not isinstance(since, dict) or not all(k in late and v in meta["releases"] for k, v in since.items()):
        return [str(MatrixError(f"{label}/releases.json", "since", "not {late kind: an indexed release}"))]
    return []


def _check_table(table: dict[str, Any], stem: str, file: str, releases: int, shard: tuple[int, list[str]]) -> list[str]:
    shape = _IMPORT_KEY if stem == IMPORTS else _KEY_SHAPES[ApiKind(stem)]
    index, bounds = shard
    # The keys shard `index` holds lie in [low, high): the same test as shard_of(key, bounds) == index.
    low = bounds[index - 1] if 0 < index <= len(bounds) else None
    high = bounds[index] if index < len(bounds) else None
    if _sound(table, shape, low, high, releases):
        return []
    problems = []
    verdicts: dict[str, str | None] = {}  # a table repeats a few range texts over thousands of keys
    for key, text in table.items():
        if not shape.match(key):
            problems.append(str(MatrixError(file, key, "malformed key")))
            continue
        if (low is not None and key < low) or (high is not None and key >= high):
            problems.append(str(MatrixError(file, key, f"belongs in shard {shard_of(key, bounds)}")))
        if not isinstance(text, str):
            why: str | None = f"malformed release ranges {text!r}"
        elif text in verdicts:
            why = verdicts[text]
        else:
            why = verdicts[text] = _spans_problem(text, releases)
        if why is not None:
            problems.append(str(MatrixError(file, key, why)))
    return problems


def _sound(table: dict[str, Any], shape: re.Pattern[str], low: str | None, high: str | None, releases: int) -> bool:
    """Whether the whole table is well formed, in passes over all its keys at once (a loop per key over the shipped
    index's 800,000 keys cost seconds, more under coverage); False: the loop per key names each problem."""
    try:
        texts = set(table.values())
    except TypeError:  # a list or an object where a range text belongs
        return False
    return (all(map(shape.match, table)) and (low is None or min(table, default=low) >= low)
            and (high is None or max(table, default="") < high) and set(map(type, texts)) <= {str}
            and all(_spans_problem(text, releases) is None for text in texts))


def _spans_problem(text: str, releases: int) -> str | None:
    """What is wrong with one key's release ranges, or None."""
    try:
        spans = decode_spans(text)
    except ValueError:
        return f"malformed release ranges {text!r}"
    prev = -2
    for a, b in spans:
        if not (prev + 1 < a <= b < releases):
            return f"release ranges {text!r} unsorted, adjacent or past the {releases} releases"
        prev = b
    return None
