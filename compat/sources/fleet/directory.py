"""A directory of saved snapshots, one `compat facts` file per node (`NODE.json`)."""

from __future__ import annotations

from pathlib import Path

from compat.errors import CompatError, UsageError
from compat.model.facts import Facts
from compat.model.fleet import Member, MemberState
from compat.sources.facts_file import read_text
from compat.sources.fleet.snapshot import read_snapshot


def read_members(directory: Path) -> list[Member]:
    """One member per `*.json` file, named by the file's stem; an unreadable file is an UNREADABLE member."""
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory of facts files")
    members: list[Member] = []
    # Nodes cloned from one image write byte-identical snapshots: each distinct text is parsed once
    # (and, being one object, judged once).
    parsed: dict[str, Facts | str] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            text = read_text(path)
        except CompatError as exc:  # unreadable: a FIFO, too large, not UTF-8
            members.append(Member(node=path.stem, state=MemberState.UNREADABLE, detail=" ".join(str(exc).split())))
            continue
        facts = parsed.get(text)
        if facts is None:
            facts = parsed[text] = read_snapshot(text, origin=path.name)
        if isinstance(facts, str):  # not a facts document, or values out of shape: this node only
            members.append(Member(node=path.stem, state=MemberState.UNREADABLE, detail=facts))
        else:
            members.append(Member(node=path.stem, facts=facts))
    if not members:
        raise UsageError(f"{directory} holds no facts files (*.json)")
    return members


def node_name(environ: dict[str, str], hostname: str) -> str:
    """The name of this node: Slurm's (SLURMD_NODENAME), else the short host name."""
    return environ.get("SLURMD_NODENAME") or hostname.split(".")[0]


def expand_output(pattern: str, environ: dict[str, str], hostname: str) -> Path:
    """`compat facts -o DIR/%N.json`: %N is the node name (as in srun's own file patterns), %% a percent sign."""
    name = node_name(environ, hostname)
    return Path(pattern.replace("%%", "\0").replace("%N", name).replace("\0", "%"))


def facts_output_path(pattern: str) -> Path:
    """`compat facts -o PATTERN` on this node (%N: SLURMD_NODENAME or the short host name)."""
    import os
    import socket

    return expand_output(pattern, dict(os.environ), socket.gethostname())
