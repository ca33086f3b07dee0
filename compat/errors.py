"""Errors meant for users. Anything else that escapes is a bug and keeps its traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compat.model.conflict import ConflictCause


class CompatError(Exception):
    """Root of every error that the CLI reports as one line and exit code 2."""


class UsageError(CompatError):
    """The command line or an input file asks for something that cannot be done."""


class FactsError(CompatError):
    """A saved facts file cannot be read."""


class MatrixError(CompatError):
    """Curated data is invalid; the message names the file and the key path."""

    def __init__(self, file: str, key: str, message: str) -> None:
        self.file = file
        self.key = key
        # One line, as every error is: packaging's parse errors add the text and a caret on lines of their own.
        message = next((line.strip() for line in message.splitlines() if line.strip()), message)
        super().__init__(f"{file}: {key}: {message}" if key else f"{file}: {message}")


class PackageIndexError(CompatError):
    """The package index could not be read (network, HTTP status, malformed page)."""


class IndexBudgetSpent(PackageIndexError):
    """The time a caller allowed the package index ran out (explain's on-demand indexing): what was not
    read is read the next time, never recorded as unreadable."""


class ResolutionError(CompatError):
    """No pinned set satisfies the targets; `causes` are records, `compat.report.lock.render_conflict` words them."""

    def __init__(self, causes: tuple[ConflictCause, ...]) -> None:
        self.causes = causes
        # A one-line summary for logs: kinds and ids only; the words are the renderer's.
        about = [c.package or c.signature or (c.constraint.signature if c.constraint else "") for c in causes]
        summary = ", ".join(dict.fromkeys(f"{c.kind.value} {a}".strip() for c, a in zip(causes, about, strict=True)))
        super().__init__(f"no compatible set ({summary})")
