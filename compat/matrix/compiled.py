"""The compiled matrix: the parsed and validated curated data, pickled under the hash of everything it came from.

Parsing the catalog (TOML, then compat's own reading of 200+ patterns) costs a third of a second, which is most
of what `compat explain` on a pasted log costs. The key covers the bytes of every curated file the loader reads,
the loader's own source and the Python version, so an edited file, an overlay, a refreshed snapshot or a new
compat gives a new entry; an entry that cannot be read back is rebuilt, never trusted. Release files are not in
it: they load lazily, through their own cache (`compat.matrix.releases`).

The wheel ships one too (`compat/_matrix/compiled.pickle`, written by the build hook in hatch_build.py), under a
key that leaves out where the matrix is installed: a first run on a fresh machine or image reads it instead of
parsing the TOML, when the key still matches (same curated files, loader and Python version); otherwise the
matrix is compiled as before.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compat.atomic import write_atomic
from compat.matrix._toml import MAX_BYTES
from compat.regular_file import read_regular

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.matrix.releases import ReleaseIndex

_LOADER = Path(__file__).resolve().parent
_MODEL = _LOADER.parent / "model"
FORMAT = 1
"""Bumped when the entry's layout changes."""
SHIPPED = "compiled.pickle"
"""The compiled matrix the wheel ships beside the curated files (compat/_matrix/)."""

AUTOMATA = "automata"
"""The folder beside it where the wheel ships explain's compiled automata for its catalog (hatch_build.py)."""


def matrix_key(roots: Sequence[Path], *, portable: bool = False) -> str:
    """The sha256 of what a matrix loaded from `roots` depends on (the curated files and the loader); `portable`
    leaves out where the roots are (the shipped entry's key: the roots are set again on load)."""
    digest = hashlib.sha256(f"{FORMAT} {sys.version_info[:2]} {sys.implementation.name}".encode())
    for source in sorted([*_LOADER.glob("*.py"), *_MODEL.glob("*.py")]):
        _feed(digest, source.name, source)
    for i, root in enumerate(roots):
        if not portable:
            digest.update(f"\0root {i} {root}\0".encode())  # the matrix records its roots (the API index is read there)
        for path in sorted([*root.glob("*.toml"), *(root / "signatures").glob("*.toml")]):
            _feed(digest, f"{i}/{path.relative_to(root).as_posix()}", path)
    return digest.hexdigest()


def _feed(digest: hashlib._Hash, name: str, path: Path) -> None:
    # Read as the loader reads it: a FIFO or device in an overlay is refused (OSError: load_compiled then builds, and
    # the loader names the file), never read until it ends.
    data = read_regular(path, limit=MAX_BYTES)
    digest.update(f"\0{name}\0{len(data)}\0".encode())
    digest.update(data)


def load_compiled(roots: Sequence[Path], cache_dir: Path, build: Callable[[], Matrix], releases: Callable[[], ReleaseIndex]) -> Matrix:
    """The matrix `build` would give, from the cache when an entry for exactly these inputs is there.

    `releases` makes the lazy release index again (it is not pickled). Cache trouble only costs speed:
    an unreadable or unwritable cache falls back to `build`; `build`'s own errors (MatrixError) propagate.
    """
    try:
        entry = cache_dir / "matrix" / f"{matrix_key(roots)}.pickle"
    except OSError:
        return build()
    try:
        found = pickle.loads(entry.read_bytes())
    except FileNotFoundError:
        found = None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, LookupError, TypeError, ValueError,
            RecursionError):
        # a torn or foreign entry, or one written by other code (a class it names is gone or moved): rebuilt,
        # never trusted
        found = None
    from compat.matrix import Matrix

    if isinstance(found, Matrix):
        return dataclasses.replace(found, releases=releases())
    shipped = load_shipped(roots, releases)
    if shipped is not None:
        return shipped
    matrix = build()
    try:
        # The lazy release index holds its own cache and is made again on load: it is left out.
        lean = dataclasses.replace(matrix, releases=None)  # type: ignore[arg-type]
        write_atomic(entry, pickle.dumps(lean, protocol=pickle.HIGHEST_PROTOCOL))
    except (OSError, pickle.PicklingError):
        pass
    return matrix


def load_shipped(roots: Sequence[Path], releases: Callable[[], ReleaseIndex]) -> Matrix | None:
    """The matrix the package build compiled, when it was compiled from exactly these inputs; None otherwise (an
    overlay, a checkout, an edited file, another Python, an entry that does not read back)."""
    if len(roots) != 1:
        return None
    try:
        key, found = pickle.loads((roots[0] / SHIPPED).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, LookupError, TypeError, ValueError,
            RecursionError):
        return None
    from compat.matrix import Matrix

    try:
        current = matrix_key(roots, portable=True)
    except OSError:
        return None
    if key != current or not isinstance(found, Matrix):
        return None
    return dataclasses.replace(found, roots=tuple(roots), releases=releases())


def shipped_automata(roots: Sequence[Path]) -> Path | None:
    """Where the package ships explain's automata for the matrix at `roots`: only the shipped matrix alone has them
    (an overlay's patterns make other automata; a checkout has none, and a first run compiles them into the cache)."""
    return roots[0] / AUTOMATA if len(roots) == 1 else None


def write_shipped(root: Path, out: Path) -> None:
    """Compile the matrix at `root` and write it to `out` with its portable key (the wheel's build hook)."""
    from compat.matrix import load_matrix

    matrix = load_matrix(base=root)
    lean = dataclasses.replace(matrix, releases=None)  # type: ignore[arg-type]
    write_atomic(out, pickle.dumps((matrix_key((root,), portable=True), lean), protocol=pickle.HIGHEST_PROTOCOL))
