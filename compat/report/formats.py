"""Which renderer `compat doctor --format` uses: one dispatch, so the CLI only translates."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from compat.model.findings import Severity

if TYPE_CHECKING:
    # Types only: the CLI imports DoctorFormat for its options on every start.
    from compat.model.config import Waivers
    from compat.model.facts import Facts
    from compat.model.findings import Finding


class DoctorFormat(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    GITHUB = "github"
    SARIF = "sarif"
    JUNIT = "junit"


def render_doctor(
    fmt: DoctorFormat,
    facts: Facts,
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
    report_url: str | None = None,
    file: str | None = None,
    config: str | None = None,
    color: bool = False,
    width: int = 100,
) -> str:
    """The report in `fmt`; `file` is the artifact CI annotations point at (the requirements or config file)."""
    from compat.report import ci, doctor, markdown
    from compat.report import waivers as notes

    if fmt is DoctorFormat.JSON:
        return doctor.render_json(facts, findings, fail_on=fail_on, waivers=waivers)
    if fmt is DoctorFormat.MARKDOWN:
        return markdown.render_markdown(facts, findings, waivers=waivers, report_url=report_url, strict=strict, fail_on=fail_on)
    if fmt is DoctorFormat.GITHUB:
        return ci.render_github(findings, waivers=waivers, strict=strict, fail_on=fail_on, report_url=report_url, file=file)
    if fmt is DoctorFormat.SARIF:
        return ci.render_sarif(findings, waivers=waivers, report_url=report_url, file=file)
    if fmt is DoctorFormat.JUNIT:
        return ci.render_junit(findings, waivers=waivers, strict=strict, fail_on=fail_on, report_url=report_url)
    return doctor.render_text(facts, findings, color=color, width=width, fail_on=fail_on) + notes.render_notes(
        findings, waivers=waivers, strict=strict, fail_on=fail_on, config=config, report_url=report_url,
    )
