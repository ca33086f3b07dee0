"""Secrets, found by name and by value, so none is stored in facts or printed anywhere.

A name filter alone misses `VLLM_API_PASS` and keeps a proxy URL with `user:password@` in it; a
value filter alone misses a plain password. Both apply: `secret_name` decides on the words of a
variable's name (with an allow-list of harmless names such as `NCCL_IB_PKEY`), `secret_value` on
what the value looks like (credentials in a URL, a known token prefix, a long random-looking word),
and `redact_text` masks URL credentials and known tokens inside any text (errors, reports).

A leaf module (standard library only): the sources that capture values, the index client and the
command line that prints all use it.
"""

from __future__ import annotations

import re
import urllib.parse

MASK = "***"
"""What a secret is replaced with."""

_LONG_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "COOKIE", "PRIVATE", "APIKEY", "ACCESSKEY", "BEARER")
"""Words that mark a secret wherever they appear in a name (HF_TOKEN, MYSECRETVALUE)."""
_SHORT_PARTS = frozenset({"KEY", "PASS", "PW", "PWD", "PAT", "AUTH", "SIG", "SIGNATURE", "CRED", "CREDS", "SESSION"})
"""Words that mark a secret only as a whole `_`-separated part (NCCL_PW, HUB_PAT), never inside
another word (PATH, BYPASS, PKEY)."""
HARMLESS_NAMES = frozenset({
    "NCCL_IB_PKEY",  # an InfiniBand partition key: a number that selects a partition, not a secret
    "HF_HUB_DISABLE_IMPLICIT_TOKEN",  # a switch
})
"""Names kept although a word of theirs looks like a secret's; their values are still checked."""

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*:/{1,2})(?P<userinfo>[^\s/?#@]*:[^\s/?#@]*|[^\s/?#@:]{16,})@")
"""`scheme://user:password@` or `scheme://<long token>@` (a bare short user such as `git@` is no secret). One
slash too: a URL given where a path is expected comes back from `Path` as `https:/user:password@host`."""
_TOKENS = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|sk-[A-Za-z0-9_\-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|pypi-AgE[A-Za-z0-9_\-]{20,}|npm_[A-Za-z0-9]{20,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"
)
"""Tokens of well-known services (Hugging Face, GitHub, GitLab, OpenAI-style, Slack, package
registries, AWS access keys, JWTs), recognised by their prefixes."""
_QUERY_SECRET = re.compile(
    r"(?i)(?P<key>[?&;](?:access_token|id_token|refresh_token|auth_token|token|auth|sig|signature|"
    r"x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|"
    r"api_key|api-key|apikey|key|password|passwd|pwd|secret|client_secret)=)(?P<value>[^&#\s\"'<>]+)"
)
"""A token in a URL's query string (`?token=`, a signed URL's `sig=` or `X-Amz-Signature=`): the value goes."""
_AUTH_HEADER = re.compile(
    r"(?i)(?P<key>\bauthorization\s*[:=]\s*(?:(?:bearer|basic|digest|token)\s+)?|\bbearer\s+)"
    r"(?P<value>[A-Za-z0-9._~+/=\-]{8,})"
)
"""`Authorization: <scheme> <value>` or a bare `Bearer <value>`: the value goes, whatever it looks like."""
_EQUALS = re.compile(r"=(?![=\s])")
"""Where a `NAME=value` assignment could be: a literal first, so the search skips text without one at C speed
(a pattern that starts with the name tries every position: 3.7 ms of a 93 KB doctor JSON, this one 0.3 ms)."""
_NAME = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z]{2,}")
"""An environment variable's name (upper case): a log's `export WANDB_API_KEY=...`, an env dump, a command line.
Its value goes when `secret_name` says the name holds one and the value is more than a switch."""
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_KEYWORDS = frozenset({
    "password", "passwd", "pwd", "secret", "client_secret", "api_key", "apikey", "access_token", "auth_token",
    "token", "hf_token", "private_key",
})
"""Lower-case names whose value is a secret whatever the code around it: a traceback's `password=...` or
`token=...` keyword argument, a connection string's `password=`. Only these exact words: `pad_token=`,
`tokenizer=` and `max_tokens=` are a model's settings."""
_VALUE = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|[^\s&;,'\"]+")
_SWITCH = re.compile(r"(?i)true|false|yes|no|on|off|none|null|\d{1,4}|\$\{?\w+\}?|\*+")
"""Values that are no secret whatever the name (`TOKENIZERS_PARALLELISM=false`, `HF_TOKEN=$HF_TOKEN`, masked)."""
_RANDOM_WORD = re.compile(r"[A-Za-z0-9_\-+/=.]{24,}")
_UUID = re.compile(r"(?:[A-Za-z]+-)*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?:/\d+)*")
"""GPU-<uuid> and MIG-<uuid> in CUDA_VISIBLE_DEVICES: identifiers, not secrets."""


def secret_name(name: str) -> bool:
    """The variable's name says it holds a secret (and is not an allow-listed harmless name)."""
    upper = name.upper()
    if upper in HARMLESS_NAMES:
        return False
    if any(word in upper for word in _LONG_WORDS):
        return True
    return any(part in _SHORT_PARTS for part in re.split(r"[^A-Z0-9]+", upper))


def secret_value(value: str) -> bool:
    """The value looks like a secret: a URL with credentials, a known token, or a long random word."""
    if _URL_USERINFO.search(value) or _TOKENS.search(value) or _QUERY_SECRET.search(value) or _AUTH_HEADER.search(value):
        return True
    word = value.strip()
    return bool(
        _RANDOM_WORD.fullmatch(word)
        and not word.startswith(("/", "."))  # a path
        and not _UUID.fullmatch(word)
        and re.search(r"[a-z]", word) and re.search(r"[A-Z]", word) and re.search(r"[0-9]", word)
    )


def redact_text(text: str) -> str:
    """`text` with URL credentials, query-string tokens, Authorization/Bearer values, known tokens and the values
    of secret-named `NAME=value` assignments masked; everything else unchanged."""
    if ":/" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    if "=" in text:
        text = _QUERY_SECRET.sub(lambda m: f"{m.group('key')}{MASK}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group('key')}{MASK}", text)
    if "=" in text:
        text = _mask_assignments(text)
    return _TOKENS.sub(MASK, text)


def _mask_assignments(text: str) -> str:
    parts: list[str] = []
    done = 0
    for equals in _EQUALS.finditer(text):
        at = equals.start()
        if at < done:
            continue
        begin = at
        while begin > done and at - begin < 128 and text[begin - 1] in _NAME_CHARS:
            begin -= 1
        before = text[begin - 1] if begin else " "
        if before.isalnum() or before in "_.-" or not _secret_assignment(text, begin, at):
            continue  # part of a longer word (a dotted name, an option), or no secret's name
        value = _VALUE.match(text, equals.end())
        if value is None or _SWITCH.fullmatch(value.group().strip("\"'")):
            continue
        parts += (text[done:equals.end()], MASK)
        done = value.end()
    return "".join(parts) + text[done:] if parts else text


def _secret_assignment(text: str, begin: int, at: int) -> bool:
    """text[begin:at], the name before an `=`, is an upper-case secret's name or a lower-case secret keyword."""
    if _NAME.fullmatch(text, begin, at):
        return secret_name(text[begin:at])
    return text[begin:at] in _KEYWORDS


def redact_value(name: str, value: str) -> str | None:
    """What may be kept of an environment variable: None for a secret name, the value masked where
    it holds credentials, MASK for a value that is itself a token."""
    if secret_name(name):
        return None
    masked = redact_text(value)
    if masked != value:
        return masked
    return MASK if secret_value(value) else value


def redact_url(url: str) -> str:
    """The URL without its credentials (a mirror URL may carry a token in `user:password@`)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, f"***@{host}", parts.path, parts.query, parts.fragment))
