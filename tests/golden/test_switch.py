"""The one golden switch: off, a golden file is only compared; on (COMPAT_UPDATE_GOLDEN=1 or --update-golden),
it is rewritten first, so the comparison passes and the diff shows the change."""

from __future__ import annotations

import pytest

from tests.support import golden
from tests.support.golden import check_golden


def test_off_a_drifted_or_missing_golden_file_fails_and_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.delenv(golden.ENV, raising=False)
    monkeypatch.setattr(golden, "_from_option", False)
    path = tmp_path / "out.txt"
    with pytest.raises(AssertionError, match="no golden file"):
        check_golden(path, "new\n")
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="differs from its golden file"):
        check_golden(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"


@pytest.mark.parametrize("switch", ["env", "option"])
def test_on_the_golden_file_is_rewritten_then_compared(tmp_path, monkeypatch, switch):
    monkeypatch.delenv(golden.ENV, raising=False)
    monkeypatch.setattr(golden, "_from_option", False)
    if switch == "env":
        monkeypatch.setenv(golden.ENV, "1")
    else:
        golden.request_update()  # what tests/conftest.py does for --update-golden; monkeypatch restores it
    path = tmp_path / "sub" / "out.txt"
    check_golden(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
