"""A small client for a package index: the simple API file list and each file's core metadata.

The simple API is asked for PEP 691 JSON and accepts the PEP 503 HTML form (content negotiation),
so the public index and company mirrors both work. Core metadata comes from the PEP 658/714
`<file URL>.metadata` file when the index advertises it; mirrors that do not serve it get the
wheel's `*.dist-info/METADATA` read with HTTP range requests (a few KiB of a wheel that may weigh
gigabytes), the way pip's lazy wheel does. The per-version JSON endpoint is never used: many mirrors
do not serve it.

The requests themselves go through an `Http` (compat/sources/http.py in use, a fake in tests): this
module asks and parses, and never reaches the network itself.
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from compat.errors import PackageIndexError
from compat.maintain.remote_zip import RemoteZip
from compat.redact import redact_url as redact

_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, "
    "application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
MIB = 1024 * 1024
MAX_PAGE = 64 * MIB
"""A project page: torch's, the largest tracked, is a few MiB."""
MAX_METADATA = 16 * MIB
"""A core metadata document (or a wheel's METADATA, decompressed): real ones are a few KiB."""
MAX_BODY = 256 * MIB
"""Anything else read whole (a range, or a wheel from a server that ignores ranges)."""


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "url": (str,),
    "hashes": (dict, type(None)),
    "requires-python": (str, type(None)),
    "upload-time": (str, type(None)),
    "yanked": (bool, str),
    "core-metadata": (bool, dict, str),
    "dist-info-metadata": (bool, dict, str),
}
"""PEP 691's types for the fields compat reads; anything else is a malformed page, not a guess."""


def _check_types(entry: dict[str, Any]) -> None:
    name = entry["filename"][:100]
    for key, types in _FIELD_TYPES.items():
        if key in entry and not isinstance(entry[key], types):
            raise ValueError(f"{name}: {key!r} is a JSON {type(entry[key]).__name__}")
    for key in ("hashes", "core-metadata", "dist-info-metadata"):
        value = entry.get(key)
        if isinstance(value, dict) and not all(isinstance(v, str) for v in value.values()):
            raise ValueError(f"{name}: {key!r} holds a value that is not a string")


@dataclass(frozen=True, kw_only=True)
class IndexFile:
    """One distribution file listed by the simple API."""

    filename: str
    """The file's name, e.g. "vllm-0.7.2-cp38-abi3-manylinux1_x86_64.whl"."""
    url: str
    """Absolute download URL without the hash fragment."""
    version: Version
    """The release the file belongs to (from its name)."""
    wheel: bool
    """True for a wheel, False for an sdist."""
    tags: frozenset[str]
    """Wheel tags ("cp38-abi3-manylinux1_x86_64"); empty for an sdist."""
    build: int
    """Wheel build number (0 when absent); pip prefers the highest."""
    requires_python: str | None
    """`data-requires-python` / `requires-python` as listed, None when not listed."""
    upload_time: str | None
    """PEP 700 upload time (ISO 8601) when the index gives it."""
    yanked: bool
    yanked_reason: str | None
    """PEP 592 reason; None when not yanked or no reason given."""
    core_metadata: bool
    """The index advertises `<url>.metadata` (PEP 658/714)."""
    metadata_sha256: str | None
    """Expected sha256 of the `.metadata` file when the index gives it."""
    sha256: str | None
    """sha256 of the file itself when the index gives it."""


def _file(
    *,
    project: str,
    filename: str,
    url: str,
    hashes: dict[str, str],
    requires_python: str | None,
    upload_time: str | None,
    yanked: Any,
    core_metadata: Any,
) -> IndexFile | None:
    """An IndexFile, or None for files that are not this project's wheel or sdist."""
    try:
        if filename.endswith(".whl"):
            name, version, build, tags = parse_wheel_filename(filename)
            wheel, tag_names, build_no = True, frozenset(str(t) for t in tags), (build[0] if build else 0)
        else:
            name, version = parse_sdist_filename(filename)
            wheel, tag_names, build_no = False, frozenset(), 0
    except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
        # .exe, .egg, .rpm, ... from another era, or a version no int can hold: pip ignores them too
        return None
    if canonicalize_name(name) != canonicalize_name(project):
        return None
    meta_hash = None
    if isinstance(core_metadata, dict):
        meta_hash = core_metadata.get("sha256")
        core_metadata = True
    elif isinstance(core_metadata, str):
        if "=" in core_metadata:
            algo, _, value = core_metadata.partition("=")
            meta_hash = value if algo == "sha256" else None
        core_metadata = core_metadata.lower() != "false"
    return IndexFile(
        filename=filename,
        url=url,
        version=version,
        wheel=wheel,
        tags=tag_names,
        build=build_no,
        requires_python=(requires_python or None),
        upload_time=upload_time or None,
        yanked=yanked is not False and yanked is not None,
        yanked_reason=yanked if isinstance(yanked, str) and yanked else None,
        core_metadata=bool(core_metadata),
        metadata_sha256=meta_hash,
        sha256=hashes.get("sha256"),
    )


class _LinkParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._open, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.anchors.append((self._open, "".join(self._text).strip()))
            self._open = None


def _split_url(base: str, href: str) -> tuple[str, dict[str, str]]:
    url = urllib.parse.urljoin(base, href)
    url, _, fragment = url.partition("#")
    hashes = {}
    if "=" in fragment:
        algo, _, value = fragment.partition("=")
        hashes[algo] = value
    return url, hashes


def parse_simple_html(text: str, *, base_url: str, project: str) -> tuple[IndexFile, ...]:
    """The files of a PEP 503 project page (PEP 592 yanked, PEP 658/714 metadata attributes)."""
    parser = _LinkParser()
    parser.feed(text)
    out = []
    for attrs, text_name in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url, hashes = _split_url(base_url, href)
        filename = text_name or urllib.parse.unquote(url.rsplit("/", 1)[-1])
        core = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
        yanked: Any = False
        if "data-yanked" in attrs:
            yanked = attrs["data-yanked"] or True
        item = _file(
            project=project,
            filename=filename,
            url=url,
            hashes=hashes,
            requires_python=attrs.get("data-requires-python"),
            upload_time=attrs.get("data-upload-time"),
            yanked=yanked,
            core_metadata=core if core is not None else False,
        )
        if item is not None:
            out.append(item)
    return tuple(out)


def parse_simple_json(data: Any, *, base_url: str, project: str) -> tuple[IndexFile, ...]:
    """The files of a PEP 691 project response."""
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ValueError("no 'files' list")
    out = []
    for entry in data["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise ValueError("a file entry without a filename")
        _check_types(entry)
        url, _ = _split_url(base_url, str(entry.get("url", "")))
        core = entry.get("core-metadata", entry.get("dist-info-metadata", False))
        item = _file(
            project=project,
            filename=entry["filename"],
            url=url,
            hashes=hashes if isinstance(hashes := entry.get("hashes"), dict) else {},
            requires_python=entry.get("requires-python"),
            upload_time=entry.get("upload-time"),
            yanked=entry.get("yanked", False),
            core_metadata=core,
        )
        if item is not None:
            out.append(item)
    return tuple(out)


class Response(Protocol):
    """A response read whole (compat.sources.http.HttpResponse)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def url(self) -> str: ...

    @property
    def content(self) -> bytes: ...


class Http(Protocol):
    """What the client needs of HTTP: a bounded GET that raises PackageIndexError (compat.sources.http.HttpClient)."""

    @property
    def requests_made(self) -> int: ...

    def get(
        self, url: str, *, headers: dict[str, str] | None = None, ok: tuple[int, ...] = (200,), limit: int = MAX_BODY,
    ) -> Response: ...


def _text(response: Response) -> str:
    charset = response.headers.get("Content-Type", "").partition("charset=")[2].split(";")[0].strip() or "utf-8"
    try:
        return response.content.decode(charset, errors="replace")
    except LookupError:
        return response.content.decode("utf-8", errors="replace")


class IndexClient:
    """Reads project pages and core metadata from one index through `http`; safe to share between threads
    when `http` is."""

    def __init__(self, index_url: str, *, http: Http) -> None:
        self.index_url = index_url.rstrip("/") + "/"
        self._http = http
        self._get = http.get
        self._lock = threading.Lock()
        self.metadata_fetched = 0
        """Core metadata documents read from the network."""

    @property
    def requests_made(self) -> int:
        """HTTP requests sent (retries included): a refresh with nothing new sends only page requests."""
        return self._http.requests_made

    def project_files(self, project: str) -> tuple[IndexFile, ...]:
        """Every file the index lists for a project; raises PackageIndexError."""
        url = urllib.parse.urljoin(self.index_url, canonicalize_name(project) + "/")
        response = self._get(url, headers={"Accept": _ACCEPT}, limit=MAX_PAGE)
        ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if ctype == "application/vnd.pypi.simple.v1+json" or ctype.endswith("+json") or ctype == "application/json":
                return parse_simple_json(json.loads(response.content), base_url=response.url or url, project=project)
            return parse_simple_html(_text(response), base_url=response.url or url, project=project)
        except ValueError as exc:
            raise PackageIndexError(f"{redact(url)}: malformed project page ({str(exc)[:200]})") from exc
        except RecursionError:
            raise PackageIndexError(f"{redact(url)}: malformed project page (nested too deeply)") from None

    def core_metadata(self, file: IndexFile) -> bytes:
        """The file's core metadata (RFC 822 text); raises PackageIndexError."""
        if file.core_metadata:
            data = self._get(file.url + ".metadata", limit=MAX_METADATA).content
            if file.metadata_sha256 and hashlib.sha256(data).hexdigest() != file.metadata_sha256:
                raise PackageIndexError(f"{redact(file.url)}.metadata: sha256 mismatch")
        elif file.wheel:
            data = self._wheel_metadata(file)
        else:
            raise PackageIndexError(f"{file.filename}: an sdist has no served core metadata")
        with self._lock:
            self.metadata_fetched += 1
        return data

    def byte_range(self, url: str, start: int | None, length: int) -> tuple[int, int, bytes]:
        """(start, total size, bytes) of `length` bytes at `start` (None: the last `length` bytes).

        A server that ignores ranges answers the whole file, returned as starting at 0.
        """
        spec = f"bytes=-{length}" if start is None else f"bytes={start}-{start + length - 1}"
        response = self._get(url, headers={"Range": spec}, ok=(200, 206))
        body = response.content
        if response.status_code == 200:
            return 0, len(body), body
        total = response.headers.get("Content-Range", "").rpartition("/")[2]
        if not total.isdigit():
            raise PackageIndexError(f"{redact(url)}: range response without a total size")
        begin = int(total) - len(body) if start is None else start
        if start is not None and len(body) != min(length, int(total) - start):
            raise PackageIndexError(f"{redact(url)}: short range response")
        return begin, int(total), body

    def download(self, url: str, *, limit: int) -> bytes:
        """A whole file (an sdist), refused past `limit` bytes; raises PackageIndexError."""
        data = self._get(url).content
        if len(data) > limit:
            raise PackageIndexError(f"{redact(url)}: larger than {limit} bytes")
        return data

    def _wheel_metadata(self, file: IndexFile) -> bytes:
        name, _, rest = file.filename.partition("-")
        version = rest.partition("-")[0]
        # The dist-info sits at the end of a wheel, beside the central directory: a short first read holds both.
        remote = RemoteZip(lambda start, length: self.byte_range(file.url, start, length), file.filename, tail=64 * 1024)
        by_name = {m.name: m for m in remote.members}
        wanted = f"{name}-{version}.dist-info/METADATA"
        if wanted not in by_name:
            candidates = [n for n in by_name if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(candidates) != 1:
                raise PackageIndexError(f"{file.filename}: no single *.dist-info/METADATA in the wheel")
            wanted = candidates[0]
        # The sizes in a zip are the sender's word: the declared one is checked here, and the read
        # inflates no more than it (a zip bomb that understates it fails its CRC).
        if by_name[wanted].size > MAX_METADATA:
            raise PackageIndexError(f"{file.filename}: METADATA larger than {MAX_METADATA // MIB} MiB")
        data = remote.read([by_name[wanted]], max_member=MAX_METADATA).get(wanted)
        if data is None:
            raise PackageIndexError(f"{file.filename}: cannot read the wheel's METADATA")
        return data

