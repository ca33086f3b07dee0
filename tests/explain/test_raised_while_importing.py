"""An error a package raised while a module was being imported is about the installed code, whatever its type (issue 23):
an import passes none of the program's data, so a ValueError or KeyError raised there is not the program's bug. Real
lines in tests/data/logs/classes/raised-while-importing.log; the mechanism is tested without the catalog, which names
these two by their wording."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compat.explain.match import explain
from compat.explain.verdict import Clue, ErrorVerdict
from tests.support.paths import LOGS

NO_CATALOG = SimpleNamespace(signatures=())


def _cases() -> list:
    """Each block: a `# thread` line, then the lines as posted (IPython's have blank lines), up to the next `# ` line."""
    text = (LOGS / "classes" / "raised-while-importing.log").read_text(encoding="utf-8")
    blocks = [b.split("\n", 1) for b in text.split("\n# ") if b.strip()]
    return [pytest.param(body.strip("\n") + "\n", id=head.lstrip("# ").split(" ")[0]) for head, body in blocks]


@pytest.mark.parametrize("text", _cases())
def test_a_data_error_raised_by_an_import_is_the_environments(text):
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT, error.reasons
    assert f"clue: {Clue.IMPORT.value}" in error.reasons


_OWN_MODULE = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 3, in <module>\n    from mydata import rows\n'
               '  File "/home/me/mydata.py", line 9, in <module>\n    rows = load(PATH)\n'
               '  File "/home/me/mydata.py", line 5, in load\n    raise ValueError("empty file")\nValueError: empty file\n')
# The same package frame as an import's, reached from a call: the program passed it data.
_CALLED = ('Traceback (most recent call last):\n  File "/home/me/train.py", line 30, in <module>\n    ds = prepare(rows)\n'
           '  File "/usr/lib/python3.11/site-packages/trl/data_utils.py", line 88, in prepare\n'
           '    raise ValueError("column text missing")\nValueError: column text missing\n')


@pytest.mark.parametrize("text", [_OWN_MODULE, _CALLED], ids=["own-module-imported", "package-called"])
def test_a_data_error_outside_a_packages_import_stays_the_programs(text):
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT


def test_a_cut_traceback_after_a_chain_marker_continues_the_chain():
    # Colab's form: the program's frame marks its current line with an arrow among its context lines.
    text = ("ValueError                                Traceback (most recent call last)\n"
            "[/usr/local/lib/python3.12/dist-packages/pkgz/utils.py](https://colab.research.google.com/drive/x#) in Version(version)\n"
            "     42         if new_version is None:\n"
            '---> 43             raise ValueError(f"Invalid version format: {version}")\n'
            "\nValueError: Invalid version format: 1\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "RuntimeError                              Traceback (most recent call last)\n"
            "[/tmp/ipython-input-1.py](https://colab.research.google.com/drive/x#) in <cell line: 0>()\n"
            "      8 from google.colab import drive\n      9 import os\n---> 10 from pkgz.chat import template\n")
    (error,) = explain([text], NO_CATALOG).errors
    assert len(error.chain) == 2 and error.chain[1].frames[-1].code == "from pkgz.chat import template"
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT


def test_a_packages_module_body_on_the_stack_is_an_import_whatever_raises_below_it():
    # A package's module body (`in <module>`) runs only while it is imported: a ValueError raised by another package's
    # constructor it calls there (a registry built at import from a newer release's API) is the install's, not data.
    text = ('Traceback (most recent call last):\n'
            '  File "/usr/lib/python3.12/site-packages/hubkit/integrations/kernels.py", line 89, in <module>\n'
            '    "cuda": LayerRepository(\n'
            '  File "/usr/lib/python3.12/site-packages/kernelpkg/layer/layer.py", line 76, in __init__\n'
            '    raise ValueError("Either a revision or a version must be specified.")\n'
            'ValueError: Either a revision or a version must be specified.\n')
    (error,) = explain([text], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.UNKNOWN_ENVIRONMENT and f"clue: {Clue.IMPORT.value}" in error.reasons
    # The same constructor called from a function the program ran: no import on the stack, the data's.
    called = text.replace("line 89, in <module>", "line 89, in build")
    (error,) = explain([called], NO_CATALOG).errors
    assert error.verdict is ErrorVerdict.NOT_ENVIRONMENT
