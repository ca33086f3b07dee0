"""Check additions and removals in the API index against the real files, by plain text, not by the extractor.

Picks COUNT keys at random (seeded) among those whose first indexed release is not the package's
first (an addition) or whose last is not its last (a removal). For each, the two releases at the
boundary are read from the index (their `.py` members by range requests, an sdist whole) and the
claim is checked with a text search independent of compat's `ast` extractor:

- module: the file `a/b.py` or `a/b/__init__.py` exists in one release and not in the other;
- name `mod:x`: the identifier `x` occurs in the module's file in one and not in the other (a
  re-export through a lazy table or `__all__` is text in that file too);
- parameter `mod:C.m(p)`: a file of `mod` (or below it) that defines `class C` (or `def C`, following
  an `import f as C` alias) has the token `p` in that definition's signature, or a dataclass field
  `p` in it or in a base class, in one release and not in the other;
- command `script sub` / model type `t`: the quoted string occurs in some `.py` file of one release
  and in none of the other.

Writes a JSON record (the picks, the releases compared, the evidence, agree or not) and prints a
summary. Usage: python bench/api_verify.py --index-url URL [--count 30] [--seed 10] [--out FILE]
[--matrix DIR] [PACKAGE ...]. Needs the network (the real index).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import tarfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from compat.maintain.index import IndexClient
from compat.maintain.remote_zip import RemoteZip
from compat.sources.http import HttpClient
from compat.timeline.index import PackageApi, indexed_packages, load_api
from compat.timeline.records import LATE_KINDS, ApiKind

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Check:
    package: str
    kind: str
    key: str
    change: str
    """"added in X" or "removed after X"."""
    present_in: str
    absent_in: str
    evidence_present: bool | None = None
    """The text check finds the key in the release the index says has it."""
    evidence_absent: bool | None = None
    """The text check does not find it in the neighbouring release."""
    agree: bool | None = None
    note: str = ""


class Sources:
    """The .py files of releases, fetched once each."""

    def __init__(self, client: IndexClient) -> None:
        self.client = client
        self.files: dict[str, dict[str, object]] = {}
        self.cache: dict[tuple[str, str], dict[str, str]] = {}

    def release(self, package: str, version: str, filename: str) -> dict[str, str]:
        key = (package, version)
        if key in self.cache:
            return self.cache[key]
        listing = self.files.get(package)
        if listing is None:
            listing = {f.filename: f for f in self.client.project_files(package)}
            self.files[package] = listing
        file = listing[filename]
        out: dict[str, str] = {}
        if filename.endswith(".whl"):
            remote = RemoteZip(lambda s, n: self.client.byte_range(file.url, s, n), filename)  # type: ignore[attr-defined]
            wanted = [m for m in remote.members if m.name.endswith(".py") and not m.name.split("/")[0].endswith((".data", ".dist-info"))]
            for name, data in remote.read(wanted).items():
                out[name] = data.decode("utf-8", "replace")
        else:
            blob = self.client.download(file.url, limit=512 * 1024 * 1024)  # type: ignore[attr-defined]
            if filename.endswith(".zip"):
                with zipfile.ZipFile(io.BytesIO(blob)) as archive:
                    for name in archive.namelist():
                        if name.endswith(".py"):
                            out[name.partition("/")[2].removeprefix("src/")] = archive.read(name).decode("utf-8", "replace")
            else:
                with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
                    for entry in archive:
                        if entry.isfile() and entry.name.endswith(".py"):
                            handle = archive.extractfile(entry)
                            if handle is not None:
                                out[entry.name.partition("/")[2].removeprefix("src/")] = handle.read().decode("utf-8", "replace")
        self.cache[key] = out
        return out


def _module_file(files: dict[str, str], module: str) -> str | None:
    base = module.replace(".", "/")
    for path in (f"{base}.py", f"{base}/__init__.py"):
        if path in files:
            return path
    return None


def _definition(text: str, name: str) -> str | None:
    """The source of `class name` / `def name` (also one indented under an `if`), up to the next
    statement at its indentation or less."""
    match = re.search(rf"^([ \t]*)(class|def|async def) {re.escape(name)}\b", text, re.MULTILINE)
    if match is None:
        return None
    indent = len(match.group(1))
    end = re.compile(rf"^[ \t]{{0,{indent}}}(class |def |async def |@|if |else:|try:|except|from |import |[A-Za-z_][\w.]*\s*(=|:|\())",
                     re.MULTILINE)
    after = end.search(text, match.end())
    return text[match.start() : after.start() if after else len(text)]


def _signature(text: str) -> str:
    """`def f(...)` up to the parenthesis that closes its parameters."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def _class_has(files: dict[str, str], name: str, param: str, depth: int, bases_in: dict[str, str] | None = None) -> bool:
    """`param` in the definition of `name` (its signature for a function), or in a base class's (dataclass fields)."""
    for text in files.values():
        body = _definition(text, name)
        if body is None:
            continue
        if body.lstrip().startswith(("def", "async def")):
            body = _signature(body.lstrip())
        if re.search(rf"\b{re.escape(param)}\b", body):
            return True
        bases = re.match(r"\s*class \w+\(([^)]*)\)", body)
        if bases and depth < 4:
            for base in bases.group(1).split(","):
                base = base.strip().rsplit(".", 1)[-1]
                if base.isidentifier() and base != name and _class_has(bases_in or files, base, param, depth + 1):
                    return True
    return False


def found(kind: ApiKind, key: str, files: dict[str, str]) -> bool:
    """The plain-text evidence that `key` exists in a release's files."""
    if kind is ApiKind.MODULE:
        return _module_file(files, key) is not None
    if kind is ApiKind.NAME:
        module, _, name = key.partition(":")
        path = _module_file(files, module)
        if path is None:
            return False
        text = files[path]
        if re.search(rf"\b{re.escape(name)}\b", text):
            return True
        if "import *" in text:  # a star import: the name is defined in a module below
            base = module.replace(".", "/")
            return any(re.search(rf"^(def|class) {re.escape(name)}\b|^{re.escape(name)}\s*=", t, re.MULTILINE)
                       for p, t in files.items() if p.startswith(f"{base}/"))
        return False
    if kind is ApiKind.PARAM:
        module, _, rest = key.partition(":")
        qual, _, param = rest.partition("(")
        param = param.rstrip(")")
        parts = qual.split(".")
        # the callable is defined in the module or below it; an alias (`import f as g`) is followed
        if _module_file(files, module) is None:  # no such module in this release: nothing is keyed under it
            return False
        base = module.replace(".", "/")
        everything = files
        files = {p: t for p, t in files.items() if p == f"{base}.py" or p.startswith(f"{base}/")}
        home = _module_file(files, module)
        alias = re.search(rf"\b(\w+) as {re.escape(parts[0])}\b", files[home]) if home else None
        if alias:  # defined elsewhere under another name
            parts[0], files = alias.group(1), everything
        elif not any(_definition(t, parts[0]) for t in files.values()):  # re-exported: defined in another module
            files = everything
        if len(parts) == 1:
            return _class_has(files, parts[0], param, depth=0, bases_in=everything)
        for text in files.values():
            body = _definition(text, parts[0])
            if body is None:
                continue
            if len(parts) > 1:
                method = re.search(rf"^\s+(async )?def {re.escape(parts[1])}\(", body, re.MULTILINE)
                if method is None:
                    continue
                body = _signature(body[method.start():])
            elif body.startswith(("def", "async def")):
                body = _signature(body)
            if re.search(rf"\b{re.escape(param)}\b", body):
                return True
        return False
    word = key.split(" ", 1)[1] if kind is ApiKind.CLI and " " in key else key
    quoted = re.compile(rf"[\"']{re.escape(word)}[\"']")
    return any(quoted.search(text) for text in files.values())


def pick(apis: list[PackageApi], count: int, seed: int) -> list[Check]:
    rng = random.Random(seed)
    pool: list[Check] = []
    for api in apis:
        first, last = api.releases[0], api.releases[-1]
        index = {r: i for i, r in enumerate(api.releases)}
        for kind in ApiKind:
            if kind in LATE_KINDS:  # recorded from a later release for some packages: the text search checks the original kinds
                continue
            for key in api.keys(kind):
                if key.endswith(("(*)", "(**)")):
                    continue
                for span in api.present(kind, key):
                    if span.first != first:
                        pool.append(Check(package=api.package, kind=kind.value, key=key, change=f"added in {span.first}",
                                          present_in=span.first, absent_in=api.releases[index[span.first] - 1]))
                    if span.last != last:
                        pool.append(Check(package=api.package, kind=kind.value, key=key, change=f"removed after {span.last}",
                                          present_in=span.last, absent_in=api.releases[index[span.last] + 1]))
    # spread across packages: a package with more keys does not crowd out the others
    by_package: dict[str, list[Check]] = {}
    for check in pool:
        by_package.setdefault(check.package, []).append(check)
    chosen: list[Check] = []
    names = sorted(by_package)
    while len(chosen) < count and any(by_package.values()):
        for name in names:
            if by_package[name] and len(chosen) < count:
                chosen.append(by_package[name].pop(rng.randrange(len(by_package[name]))))
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*")
    parser.add_argument("--index-url", required=True)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--matrix", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "api_verify.json")
    args = parser.parse_args()
    names = args.packages or list(indexed_packages(args.matrix))
    apis = [a for a in (load_api(n, args.matrix) for n in names) if isinstance(a, PackageApi)]
    checks = pick(apis, args.count, args.seed)
    sources = Sources(IndexClient(args.index_url, http=HttpClient(timeout=120)))
    by_name = {a.package: a for a in apis}
    for check in checks:
        api = by_name[check.package]
        files_of = dict(zip(api.releases, api.files, strict=True))
        kind = ApiKind(check.kind)
        try:
            check.evidence_present = found(kind, check.key, sources.release(check.package, check.present_in, files_of[check.present_in]))
            check.evidence_absent = not found(kind, check.key, sources.release(check.package, check.absent_in, files_of[check.absent_in]))
        except Exception as exc:  # a file that cannot be read leaves the check undecided, recorded as such
            check.note = f"{type(exc).__name__}: {exc}"[:200]
            continue
        check.agree = bool(check.evidence_present and check.evidence_absent)
        print(f"{'ok ' if check.agree else 'NO '} {check.package} {check.kind} {check.key}: {check.change} "
              f"(present in {check.present_in}: {check.evidence_present}; absent in {check.absent_in}: {check.evidence_absent})")
    agree = sum(c.agree is True for c in checks)
    print(f"{agree}/{len(checks)} agree with the files")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {"seed": args.seed, "count": len(checks), "agree": agree, "checks": [asdict(c) for c in checks]}
    args.out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0 if agree == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
