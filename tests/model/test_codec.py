import dataclasses

import pytest

from compat.errors import FactsError
from compat.model.facts import (
    Distribution,
    Facts,
    dump_facts,
    load_facts,
)
from compat.model.unknown import Unknown
from tests.support.facts import NO_HARDWARE, facts, interpreter, launch_by


def _facts() -> Facts:
    return facts(
        python=interpreter(version="3.11.7", executable="/usr/bin/python3", markers={"python_version": "3.11"}, glibc="2.36"),
        packages=(Distribution(name="torch", version="2.5.1+cu124", requires=("filelock",)),),
        hardware=dataclasses.replace(NO_HARDWARE, links=Unknown(reason="no GPUs")),
        launch=launch_by(Unknown(reason="not declared"), shm_bytes=64 * 2**20),
    )


def test_round_trip_is_exact_and_deterministic():
    text = dump_facts(_facts())
    assert load_facts(text) == _facts()
    assert dump_facts(load_facts(text)) == text


@pytest.mark.parametrize("text, message", [
    ("{", "not JSON"),
    ("[]", "JSON object"),
    ('{"schema_version": 99}', "schema_version 99"),
    ('{"schema_version": 1}', "missing key"),
])
def test_bad_documents_are_one_line_errors(text, message):
    with pytest.raises(FactsError, match=message):
        load_facts(text, origin="f.json")


def test_wrong_type_names_the_key_path():
    doc = dump_facts(_facts()).replace('"version": "3.11.7"', '"version": 3')
    with pytest.raises(FactsError, match=r"\$\.python\.version: expected a string"):
        load_facts(doc)
