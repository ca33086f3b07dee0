"""Every doctor format escapes what it prints for its medium: hostile values from inputs (a facts
file, a config ignore reason, an overlay's title, a log line) never start a line of their own,
never forge a GitHub workflow command, never break a markdown table or block, never reach the
output as control characters, and never make the JUnit XML unreadable."""

from __future__ import annotations

import datetime
import re
from xml.etree import ElementTree as ET

import pytest

from compat.model.config import Ignore, Ignored, Waivers
from compat.model.findings import Finding, Fix, Severity, Status, observed
from compat.printable import one_line, xml_safe
from compat.report.formats import Format, render_doctor
from tests.fault.inputs import facts_with

FORGED = ("::error::forged", "::add-mask::secret", "::warning file=x::forged", "# heading", "| cell |", "```")
EVIL = "\n::error::forged\r\n::add-mask::secret\n::warning file=x::forged\n# heading\n| cell |\n```\n\x1b]0;title\x07\x00\x1b[2J"

HOSTILE = Finding(
    id="missing-requirement", severity=Severity.ERROR, status=Status.FOUND, title=f"trl[vllm] needs vllm{EVIL}",
    cause=f"the cause{EVIL}", fix=Fix(requires=(f"vllm>=0.7{EVIL}",), advice=f"advice{EVIL}", commands=(f"pip install x{EVIL}",)),
    evidence=(observed(f"seen{EVIL}", source=f"src{EVIL}"),), refs=(f"ref{EVIL}",),
)
UNDECIDED = Finding(id="nccl-shm-too-small", severity=Severity.WARNING, status=Status.CANNOT_CHECK, title=f"shm{EVIL}",
                    cause="c", fix=Fix(), unknown=(f"why{EVIL}",))
IGNORED = Finding(id="gpu-without-bf16", severity=Severity.INFO, status=Status.FOUND, title=f"no bf16{EVIL}", cause="c", fix=Fix())
WAIVERS = Waivers(
    ignored=(Ignored(finding=IGNORED, ignore=Ignore(id="gpu-without-bf16", reason=f"on purpose{EVIL}")),),
    expired=(Ignore(id="missing-requirement", reason=f"old{EVIL}", until=datetime.date(2020, 1, 1)),),
)
FACTS = facts_with(packages={"trl": f"0.15.2{EVIL}", f"vllm{EVIL}": "0.7.2"}, env={"NCCL_DEBUG": f"INFO{EVIL}"})


def _render(fmt: Format) -> str:
    return render_doctor(fmt, FACTS, (HOSTILE, UNDECIDED), waivers=WAIVERS, strict=True, fail_on=Severity.WARNING,
                         file="requirements.txt", config="pyproject.toml")


@pytest.mark.parametrize("fmt", list(Format))
def test_no_input_starts_a_line_or_reaches_the_output_as_a_control(fmt):
    out = _render(fmt)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), fmt
    for line in out.splitlines():
        stripped = line.strip()
        assert not stripped.startswith(FORGED[:4]), (fmt, line)
        if stripped.startswith("::"):  # compat's own workflow commands only
            assert re.match(r"::(error|warning|notice) (file=requirements\.txt,)?title=compat%3A ", stripped), line


def test_markdown_keeps_its_table_and_blocks():
    out = _render(Format.MARKDOWN)
    lines = out.splitlines()
    assert sum(1 for line in lines if line.startswith("```")) % 2 == 0
    assert not any(line.strip() in {"| cell |", "```", "# heading"} for line in lines if not line.startswith("```"))
    rows = [line for line in lines if line.startswith("| **")]
    assert rows and all(line.endswith(" |") and line.count(" | ") == 1 for line in rows)


def test_junit_parses_and_keeps_the_values():
    suite = ET.fromstring(_render(Format.JUNIT))
    failure = next(c for c in suite.iter("testcase") if c.get("name") == "missing-requirement").find("failure")
    assert failure is not None and "trl[vllm] needs vllm" in (failure.get("message") or "")
    assert "\n" not in (failure.get("message") or "")


def test_github_encodes_line_breaks_in_its_own_commands():
    out = _render(Format.GITHUB)
    first = out.splitlines()[0]
    assert first.startswith("::error file=requirements.txt,title=compat%3A trl[vllm] needs vllm%0A%3A%3Aerror")
    assert "%0A::error::forged" in first and "\x1b" not in first


def test_rich_markup_in_data_is_printed_as_it_is():
    out = _render(Format.TEXT)
    assert "trl[vllm] needs vllm" in out and "vllm>=0.7" in out
    plain = Finding(id="x-y", severity=Severity.ERROR, status=Status.FOUND, title="t", cause="[bold]b[/bold] and [vllm]",
                    fix=Fix(commands=("pip install 'trl[vllm]==0.15.2'",)), evidence=(observed("trl[vllm] 0.15.2"),))
    text = render_doctor(Format.TEXT, FACTS, (plain,))
    assert "[bold]b[/bold] and [vllm]" in text and "pip install 'trl[vllm]==0.15.2'" in text and "trl[vllm] 0.15.2" in text


def test_the_helpers():
    assert one_line("a\nb\r\n\tc\u2028d\x1b[31m") == "a b c d"
    assert xml_safe("a\x00b\nc\x1b]0;t\x07") == "ab\nc"


def test_a_lock_reason_from_an_overlay_stays_in_its_comment():
    from compat.model.lock import Pin, PinReason, PinReasonKind
    from compat.report.lock import reason_texts

    pin = Pin(name="vllm", version="0.7.2", local=None, extras=(), index_url=None,
              reasons=(PinReason(kind=PinReasonKind.TARGET, package="vllm", specifier="==0.7.2\nevil==6.6.6\n::error::x"),))
    (text,) = reason_texts(pin)
    assert "\n" not in text and "evil==6.6.6" in text


def test_explain_prints_an_overlays_title_and_cause_on_their_lines():
    import dataclasses

    from compat.explain.match import explain
    from compat.explain.scan import Engine
    from compat.matrix import load_matrix
    from compat.report.explain import render_text

    matrix = load_matrix()
    sig = next(s for s in matrix.signatures if s.id == "cuda-driver-too-old")
    evil = dataclasses.replace(sig, title=f"driver{EVIL}", cause=f"cause{EVIL}")
    matrix = dataclasses.replace(matrix, signatures=tuple(evil if s.id == sig.id else s for s in matrix.signatures))
    line = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n"
    out = render_text(explain([line], matrix, None, engine=Engine.PYTHON))
    assert "driver" in out and "cause" in out
    for shown in out.splitlines():
        assert not shown.strip().startswith(FORGED[:4]), shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)
