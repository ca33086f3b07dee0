"""matrix/extensions.toml: another publisher's flash-attn wheels, one per torch minor x exact CUDA x CPython."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.errors import MatrixError
from compat.matrix._toml import Table
from compat.matrix.extensions import load_extensions, load_extensions_from
from tests.resolve.conftest import SHIPPED

ROW = {"versions": ["2.8.3"], "torch": "==2.10.*", "python": ">=3.10", "cuda": ["12.8"],
       "wheel": "https://example.org/flash_attn-{version}+cu{cuda}torch{torch}-cp{python}-cp{python}-linux_x86_64.whl",
       "publisher": "someone/wheels", "source": "someone/wheels@abc doc/packages.md"}


def _table(row: dict) -> Table:
    return Table({"extension": [{"package": "flash-attn", "source": "a/b#1", "release": [row]}]},
                 file="matrix/extensions.toml", path="")


def test_the_shipped_table_has_a_publishers_wheel_for_torch_2_10_cu128_and_none_for_cu129():
    ext = load_extensions_from([SHIPPED]).find("flash-attn")
    assert ext is not None
    row = ext.wheel_for(Version("2.8.3"), Version("2.10.0"), "12.8", "3.12")
    assert row is not None and row.publisher == "mjun0812/flash-attention-prebuild-wheels"
    assert row.url(Version("2.8.3"), Version("2.10.0"), "12.8", "3.12") == (
        "https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/v0.9.0/"
        "flash_attn-2.8.3%2Bcu128torch2.10-cp312-cp312-linux_x86_64.whl")
    assert ext.wheel_for(Version("2.8.3"), Version("2.10.0"), "12.9", "3.12") is None
    # the project's own row comes first where it covers the set (its setup.py fetches it: no URL)
    own = ext.wheel_for(Version("2.8.3"), Version("2.8.0"), "12.8", "3.12")
    assert own is not None and own.publisher is None and own.url(Version("2.8.3"), Version("2.8.0"), "12.8", "3.12") is None
    assert ext.release(Version("2.8.3")) is own


@pytest.mark.parametrize(("change", "message"), [
    ({"publisher": None}, "release[0].publisher: a `wheel` of another publisher names who built it"),
    ({"wheel": "http://example.org/{version}"}, "release[0].wheel: must be an https URL with {version} and {python} in it"),
    ({"cuda": ["12"]}, r"release[0].cuda[0]: '12' is not a CUDA version"),
    ({"cuda_majors": [12]}, "release[0].cuda_majors: give either `cuda` (exact versions) or `cuda_majors`, not both"),
    ({"cuda": None, "cuda_majors": [12]}, "release[0].cuda: a wheel named by {cuda} lists the exact CUDA versions it was built for"),
    ({"wheel": None, "cuda": None, "cuda_majors": [12]}, "release[0].wheel: a `publisher` row gives the URL of its wheels"),
])
def test_a_bad_publisher_row_names_its_file_and_key(change, message):
    row = {k: v for k, v in {**ROW, **change}.items() if v is not None}
    with pytest.raises(MatrixError) as err:
        load_extensions([_table(row)])
    assert f"matrix/extensions.toml: extension[0].{message}" in str(err.value).replace("\\", "")
