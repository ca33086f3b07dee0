"""What a log line says, without what launchers and terminals add around it.

Colours (ANSI escapes), rank/process/timestamp prefixes (`[rank3]:`, `(EngineCore_DP0 pid=123)`,
`(RayWorker pid=9)`, `2025-02-13 10:01:02,123`), and the line breaks a terminal or a paste adds in
the middle of one message. Colours are removed from whole blocks before matching, so a pattern
never has to allow for them; prefixes are removed from the few lines that matched, for display,
for telling one rank's stream from another's and for collapsing the same line from many ranks.
"""

from __future__ import annotations

import re

CSI = r"\x1b\[[\x20-\x3f]*[\x40-\x7e]"
"""A control sequence (ECMA-48): colours, cursor moves, line erasure. Parameter and intermediate
bytes are taken in any order, as terminals skip to the final byte."""
ANSI = re.compile(CSI + r"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)")
ANSI_BYTES = re.compile(ANSI.pattern.encode())

RECHECK = (r"\x1b\]",)
"""Lines the colour automaton (compat.explain.colour) reads again with their colours removed: an OSC
sequence, which colour removal takes out but the rewritten patterns do not allow for. Here, not in
colour, so that reading a coloured log whose rewriting is cached imports no pattern parser."""

_PREFIX_PARTS = (
    r"\[(?:rank|Rank|default)\s*\d+\]:?",  # [rank3]: / [default0]:
    r"\((?:[A-Za-z_][\w-]*) pid=\d+(?:, ip=[\w.:-]+)?\)",  # (EngineCore_DP0 pid=123) / (RayWorker pid=9, ip=10.0.0.1)
    r"\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?",  # 2025-02-13 10:01:02,123
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL|W|E|I)\s?\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?",  # vLLM: INFO 02-25 19:13:26
    r"\[?[A-Z]\d{3,4} \d{2}:\d{2}:\d{2}\.\d+ (?:\d+ )?[\w./]+:\d+\]",  # glog: [E321 02:07:08.408 ProcessGroupNCCL.cpp:607]
    r"\[[\w./-]+\.py:\d+(?::\w+)?\]",  # logger location: [core.py:586] / [real_accelerator.py:222:get_accelerator]
    r"\d+:(?=\s|\[|[A-Z])",  # `torchrun --tee` style rank number
)
_PREFIX = re.compile(r"^(?:\s*(?:" + "|".join(_PREFIX_PARTS) + r")\s*)+")
_STREAM = re.compile(r"\[(?:rank|Rank|default)\s*(\d+)\]|\((?:[A-Za-z_][\w-]*) pid=(\d+)")
_RANK_WORD = re.compile(r"(?i)\b(rank|local_rank|pid)(\s*[:=]?\s*)\d+")


def coloured_every(block: bytes, every: int) -> bool:
    """Whether the block holds an escape every `every` bytes or more often (counted in a sample
    after the first escape)."""
    j = block.find(b"\x1b")
    if j < 0:
        return False
    window = min(len(block) - j, _SAMPLE)
    return block.count(b"\x1b", j, j + window) * every > window


def strip_ansi(block: bytes) -> bytes:
    """The block without terminal escapes; newlines (and so line numbers) are kept."""
    if b"\x1b" not in block:
        return block
    # A large block of sparse colours is skipped through with bytes.find (`_strip_sparse_colours`). Otherwise colours
    # first, with a pattern simple enough for `re` to skip from escape to escape (one escape per 2 KB: 0.054 s per
    # 100 MB, against 0.082 s for a Python step per escape found by `re` and 0.096 s for the full pattern; a single
    # escape costs the two copies of the block either way), then whatever escapes are left.
    if len(block) >= _SPARSE_FROM and not coloured_every(block, _SPARSE_EVERY):
        stripped = _strip_sparse_colours(block)
        if stripped is not None:
            return stripped
    block = _SGR_BYTES.sub(b"", block)
    return ANSI_BYTES.sub(b"", block) if b"\x1b" in block else block


_SMART = {"\u2018".encode(): b"'", "\u2019".encode(): b"'", "\u201c".encode(): b'"', "\u201d".encode(): b'"'}
"""Typographic quotes, as a forum or an issue's rendered text gives an error pasted outside a code block
(U+2018 and U+2019 around the name in `name 'PeftModel' is not defined`): Python prints only ASCII quotes."""


_SMART_BYTES = re.compile(b"\xe2\x80[\x98\x99\x9c\x9d]")


def ascii_quotes(block: bytes) -> bytes:
    """The block with typographic single and double quotes read as ASCII ones; newlines (and so line numbers) kept."""
    # `b"\xe2\x80" in block` steps at about 1 GB/s through a log whose progress bars are full of U+2588 (E2 96 88);
    # a lone continuation byte is found at memchr's speed, and `re` looks for the four sequences in one pass
    # (54 MB: 0.003 s and 0.02 s, against 0.05 s).
    if b"\x80" not in block or _SMART_BYTES.search(block) is None:
        return block
    for smart, plain in _SMART.items():
        block = block.replace(smart, plain)
    return block


def _strip_sparse_colours(block: bytes) -> bytes | None:
    """The block without its escapes when every one is a colour (`_SGR_BYTES`), else None: what `strip_ansi`'s two
    passes give, skipping from escape to escape at `bytes.find`'s speed where `re` steps through every byte (one escape
    per 2 KB, 54 MB in 8 MB blocks: 0.081 s of CPU against 0.097 s, medians of 21 interleaved runs; copying the blocks
    alone costs 0.037 s)."""
    view = memoryview(block)
    parts = []
    start = 0
    pos = block.find(b"\x1b")
    while pos >= 0:
        m = _SGR_BYTES.match(block, pos)
        if m is None:  # a cursor move, a title, a lone ESC: the general passes decide
            view.release()
            return None
        parts.append(view[start:pos])
        start = m.end()
        pos = block.find(b"\x1b", start)
    parts.append(view[start:])
    out = b"".join(parts)
    view.release()
    return out


_SAMPLE = 256 * 1024
"""Bytes after the first escape in which the escapes are counted (a sample, not another pass)."""
_SGR_BYTES = re.compile(rb"\x1b\[[0-9;]*m")
_SPARSE_FROM = 64 * 1024
"""Bytes from which a block's escapes are found one by one when they are sparse (a line's are left to `re`)."""
_SPARSE_EVERY = 256
"""Bytes per escape below which they are sparse: a Python step per escape then costs less than `re`'s pass."""


def clean(line: str) -> str:
    """The message without ANSI colours, rank/process prefixes and timestamps."""
    line = ANSI.sub("", line)
    return _PREFIX.sub("", line, count=1).strip()


def body(line: str) -> str:
    """The line after its prefixes, leading indentation kept (it tells a traceback's code lines
    from its exception line)."""
    line = ANSI.sub("", line)
    m = _PREFIX.match(line)
    if m is None:
        return line.rstrip()
    rest = line[m.end() :]
    # The prefix pattern eats the spaces after it; give back the indentation of the message.
    lead = len(m.group(0)) - len(m.group(0).rstrip())
    return (" " * max(0, lead - 1) + rest).rstrip() if lead > 1 else rest.rstrip()


def stream(line: str) -> str:
    """Which process printed the line ("rank3", "pid123"), or "" for an unprefixed line: the
    tracebacks of eight ranks interleave, each is read in its own stream."""
    m = _STREAM.search(line[:200])
    if m is None:
        return ""
    return f"rank{m.group(1)}" if m.group(1) is not None else f"pid{m.group(2)}"


def dedup_key(line: str) -> str:
    """Lines that differ only in a rank number or pid are one line printed by several ranks."""
    return _RANK_WORD.sub(r"\1\2N", clean(line))


_MASK = re.compile(r"0x[0-9a-fA-F]+|\d+")


def masked(text: str) -> str:
    """Numbers and addresses replaced: two ranks' copies of one error compare equal."""
    return _MASK.sub("N", text)


def joined(lines: list[str]) -> tuple[str, ...]:
    """One message wrapped over `lines` read back as one line: the break may have replaced a
    space (word wrap) or cut a word (terminal wrap), so both readings are returned."""
    if len(lines) < 2:
        return tuple(lines)
    return (" ".join(lines), "".join(lines))
