"""A small client for a package index: the simple API file list and each file's core metadata.

The simple API is asked for PEP 691 JSON and accepts the PEP 503 HTML form (content negotiation),
so the public index and company mirrors both work. Core metadata comes from the PEP 658/714
`<file URL>.metadata` file when the index advertises it; mirrors that do not serve it get the
wheel's `*.dist-info/METADATA` read with HTTP range requests (a few KiB of a wheel that may weigh
gigabytes), the way pip's lazy wheel does. The per-version JSON endpoint is never used: many mirrors
do not serve it.
"""

from __future__ import annotations

import hashlib
import html.parser
import io
import threading
import time
import urllib.parse
import zipfile
from dataclasses import dataclass
from typing import Any

import requests
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from compat.errors import PackageIndexError

_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, "
    "application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def redact(url: str) -> str:
    """The URL without credentials (a mirror URL may carry a token)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))


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
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None  # .exe, .egg, .rpm, ... from another era: pip ignores them too
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


class IndexClient:
    """Reads project pages and core metadata from one index; safe to share between threads."""

    def __init__(
        self,
        index_url: str,
        *,
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.5,
        session: requests.Session | None = None,
    ) -> None:
        self.index_url = index_url.rstrip("/") + "/"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._local = threading.local()
        self._session = session
        self._lock = threading.Lock()
        self.requests_made = 0
        """HTTP requests sent (retries included): a refresh with nothing new sends only page requests."""
        self.metadata_fetched = 0
        """Core metadata documents read from the network."""

    def _http(self) -> requests.Session:
        if self._session is not None:
            return self._session
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            self._local.session = session
        return session

    def _get(self, url: str, *, headers: dict[str, str] | None = None, ok: tuple[int, ...] = (200,)) -> requests.Response:
        """GET with a timeout and exponential backoff on connection errors, 5xx/429 and truncated bodies."""
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            with self._lock:
                self.requests_made += 1
            try:
                response = self._http().get(url, headers=headers, timeout=self.timeout)
                response.content  # noqa: B018 - read the body here so a truncated one is retried
            except (requests.ConnectionError, requests.Timeout) as exc:
                last = type(exc).__name__
                continue
            except requests.RequestException as exc:  # ChunkedEncodingError, ContentDecodingError
                last = type(exc).__name__
                continue
            if response.status_code in _RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code not in ok:
                raise PackageIndexError(f"{redact(url)}: HTTP {response.status_code}")
            return response
        raise PackageIndexError(f"{redact(url)}: failed after {self.retries + 1} attempts ({last})")

    def project_files(self, project: str) -> tuple[IndexFile, ...]:
        """Every file the index lists for a project; raises PackageIndexError."""
        url = urllib.parse.urljoin(self.index_url, canonicalize_name(project) + "/")
        response = self._get(url, headers={"Accept": _ACCEPT})
        ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        try:
            if ctype == "application/vnd.pypi.simple.v1+json" or ctype.endswith("+json") or ctype == "application/json":
                return parse_simple_json(response.json(), base_url=response.url or url, project=project)
            return parse_simple_html(response.text, base_url=response.url or url, project=project)
        except ValueError as exc:
            raise PackageIndexError(f"{redact(url)}: malformed project page ({exc})") from exc

    def core_metadata(self, file: IndexFile) -> bytes:
        """The file's core metadata (RFC 822 text); raises PackageIndexError."""
        if file.core_metadata:
            data = self._get(file.url + ".metadata").content
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
        remote = _RangeFile(self, file.url)
        name, _, rest = file.filename.partition("-")
        version = rest.partition("-")[0]
        try:
            with zipfile.ZipFile(remote) as archive:
                wanted = f"{name}-{version}.dist-info/METADATA"
                names = archive.namelist()
                if wanted not in names:
                    candidates = [n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
                    if len(candidates) != 1:
                        raise PackageIndexError(f"{file.filename}: no single *.dist-info/METADATA in the wheel")
                    wanted = candidates[0]
                return archive.read(wanted)
        except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
            raise PackageIndexError(f"{file.filename}: cannot read the wheel's METADATA ({exc})") from exc


class _RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the byte ranges zipfile reads."""

    _TAIL = 64 * 1024
    _MIN = 16 * 1024

    def __init__(self, client: IndexClient, url: str) -> None:
        super().__init__()
        self._client = client
        self._url = url
        self._pos = 0
        self._chunks: list[tuple[int, bytes]] = []
        response = client._get(url, headers={"Range": f"bytes=-{self._TAIL}"}, ok=(200, 206))
        if response.status_code == 200:  # the server ignores ranges: we have the whole file
            self._size = len(response.content)
            self._chunks.append((0, response.content))
        else:
            total = response.headers.get("Content-Range", "").rpartition("/")[2]
            if not total.isdigit():
                raise PackageIndexError(f"{redact(url)}: range response without a total size")
            self._size = int(total)
            self._chunks.append((self._size - len(response.content), response.content))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), max(0, self._size - self._pos))
        if want == 0:
            return 0
        data = self._slice(self._pos, want)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self._size - self._pos
        size = min(size, max(0, self._size - self._pos))
        if size == 0:
            return b""
        data = self._slice(self._pos, size)
        self._pos += len(data)
        return data

    def _slice(self, start: int, size: int) -> bytes:
        for begin, chunk in self._chunks:
            if begin <= start and start + size <= begin + len(chunk):
                return chunk[start - begin : start - begin + size]
        end = min(self._size, start + max(size, self._MIN)) - 1
        response = self._client._get(self._url, headers={"Range": f"bytes={start}-{end}"}, ok=(206,))
        if len(response.content) != end - start + 1:
            raise PackageIndexError(f"{redact(self._url)}: short range response")
        self._chunks.append((start, response.content))
        return response.content[:size]
