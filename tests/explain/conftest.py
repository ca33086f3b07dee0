from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from compat.matrix import shipped_matrix_dir
from compat.matrix.signatures import load_signature_dir

DATA = Path(__file__).resolve().parent.parent / "data"
LOGS = DATA / "logs"
SCRIPTS = DATA / "scripts"


@pytest.fixture(scope="session")
def catalog():
    """The shipped catalog alone (explain needs nothing else from the matrix)."""
    return SimpleNamespace(signatures=load_signature_dir(shipped_matrix_dir() / "signatures"))
