"""Every output format of every command, in one table: which formats a command offers, its default, and the
pure renderer of each.

Two families of names. Report formats (`Format`: text, json, markdown, github, sarif, junit) say what a run
found, for a person, a tool, an issue or a CI system; each command offers those that make sense for its
result. Lock formats (`LockFormat`: requirements, constraints, json) are not reports but the artifact itself,
a file an installer reads; `compat lock` offers those (and PEP 751 `pylock.toml`, chosen by the name given
to `-o`). The CLI builds `--format`'s choices and help from this table, and docs/reference.md lists it.

Adding a format to a command is one entry in `FORMATS` and a renderer in the command's report module.
This module is imported on every start (for `--help`): renderers are imported when called.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from compat.model.findings import Severity

if TYPE_CHECKING:
    from compat.model.config import Config, Waivers
    from compat.model.facts import Facts
    from compat.model.findings import Finding


class Format(str, enum.Enum):
    """A report format."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    GITHUB = "github"
    SARIF = "sarif"
    JUNIT = "junit"


_FORMAT_WORDS = {
    "text": "for a person",
    "json": "for tools",
    "markdown": "a block to paste into a GitHub issue",
    "github": "GitHub workflow annotations",
    "sarif": "code scanning",
    "junit": "test reports",
    "requirements": "pip -r",
    "constraints": "pip -c",
}


@dataclass(frozen=True, kw_only=True)
class Presentation:
    """How the CLI wants a result laid out: what a renderer may need beyond the result itself."""

    color: bool = False
    """ANSI colours (a terminal, or FORCE_COLOR)."""
    width: int = 100
    """Columns to lay text out in."""
    sized: bool = False
    """`width` is a terminal's (or COLUMNS), not the default of a pipe or a file: explain then wraps."""
    top: int | None = None
    """At most this many matches (explain --top)."""
    report_url: str | None = None
    """Base URL of the finding pages, where the result does not carry one."""
    artifact: str | None = None
    """The file CI annotations point at (the requirements or config file)."""


class DoctorOutcome(Protocol):
    """What doctor's renderers read from `compat.api.DoctorResult` (a protocol: report sits below the api)."""

    @property
    def facts(self) -> Facts: ...
    @property
    def findings(self) -> tuple[Finding, ...]: ...
    @property
    def waivers(self) -> Waivers: ...
    @property
    def config(self) -> Config | None: ...
    @property
    def fail_on(self) -> Severity: ...
    @property
    def strict(self) -> bool: ...
    @property
    def report_url(self) -> str | None: ...


Render = Callable[[Any, Presentation], str]
"""A pure renderer: the command's result and the presentation in, the text out."""


@dataclass(frozen=True, kw_only=True)
class Offer:
    """The formats one command offers."""

    renderers: Mapping[str, Render]
    """Format name -> renderer, in the order `--help` lists them."""
    default: str = Format.TEXT.value
    """What the command prints without `--format`."""
    describe: Mapping[str, str] = field(default_factory=dict)
    """Words beside a name in `--help` where the shared ones do not fit the command."""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.renderers)

    def help(self) -> str:
        """`--format`'s help: every name with a few words, the default first."""
        words = {n: self.describe.get(n, _FORMAT_WORDS[n]) for n in self.names}
        parts = [f"{n} ({words[n]}{', the default' if n == self.default else ''})" for n in self.names]
        return "Output format: " + ", ".join(parts) + "."


# ----------------------------------------------------------------------------- doctor (and report)


def render_doctor(
    fmt: Format,
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
    """The doctor report in `fmt`; `file` is the artifact CI annotations point at (the requirements or config file)."""
    from compat.report import ci, doctor, markdown
    from compat.report import waivers as notes

    if fmt is Format.JSON:
        return doctor.render_json(facts, findings, fail_on=fail_on, waivers=waivers)
    if fmt is Format.MARKDOWN:
        return markdown.render_markdown(facts, findings, waivers=waivers, report_url=report_url, strict=strict, fail_on=fail_on)
    if fmt is Format.GITHUB:
        return ci.render_github(findings, waivers=waivers, strict=strict, fail_on=fail_on, report_url=report_url, file=file)
    if fmt is Format.SARIF:
        return ci.render_sarif(findings, waivers=waivers, report_url=report_url, file=file)
    if fmt is Format.JUNIT:
        return ci.render_junit(findings, waivers=waivers, strict=strict, fail_on=fail_on, report_url=report_url)
    return doctor.render_text(facts, findings, color=color, width=width, fail_on=fail_on) + notes.render_notes(
        findings, waivers=waivers, strict=strict, fail_on=fail_on, config=config, report_url=report_url,
    )


def _doctor(fmt: Format) -> Render:
    def render(result: DoctorOutcome, p: Presentation) -> str:
        return render_doctor(
            fmt, result.facts, result.findings, waivers=result.waivers, strict=result.strict, fail_on=result.fail_on,
            report_url=result.report_url or p.report_url, file=p.artifact,
            config=str(result.config.path) if result.config else None, color=p.color, width=p.width,
        )

    return render


# ----------------------------------------------------------------------------- explain


def _explain_text(result: Any, p: Presentation) -> str:
    from compat.report.explain import render_text
    from compat.report.links import render_pages

    # Wrapped to a terminal (or COLUMNS); a pipe or a file gets one line per item, for grep.
    text = render_text(result, top=p.top, width=p.width if p.sized else None, color=p.color)
    ids = [m.signature.id for m in result.matches]
    return text + render_pages(ids[: p.top] if p.top else ids, p.report_url)


def _explain_json(result: Any, p: Presentation) -> str:
    from compat.report.explain import render_json

    return render_json(result, top=p.top)


def _explain_markdown(result: Any, p: Presentation) -> str:
    from compat.report.explain import render_markdown

    return render_markdown(result, top=p.top, report_url=p.report_url)


def _explain_github(result: Any, p: Presentation) -> str:
    from compat.report.explain import render_github

    return render_github(result, top=p.top, report_url=p.report_url)


# ----------------------------------------------------------------------------- plan, lock, smoke, fleet


def _plains(module: str, *formats: str) -> dict[str, Render]:
    """`compat.report.<module>.render_<format>(result)` for each format: renderers that need nothing of the presentation."""

    def plain(fmt: str) -> Render:
        def render(result: Any, p: Presentation) -> str:
            rendered: str = getattr(importlib.import_module(f"compat.report.{module}"), f"render_{fmt}")(result)
            return rendered

        return render

    return {fmt: plain(fmt) for fmt in formats}




class LockFormat(str, enum.Enum):
    """A lock format: the file an installer reads."""

    REQUIREMENTS = "requirements"
    CONSTRAINTS = "constraints"
    JSON = "json"


def _lock(fmt: LockFormat) -> Render:
    def render(result: Any, p: Presentation) -> str:
        from compat.model.lock import FullLock
        from compat.report.lock import render_full, render_lock

        # --full is uv's closed requirements file whatever the format (pylock.toml is written by the api).
        return render_full(result) if isinstance(result, FullLock) else render_lock(result, fmt)

    return render






def _fleet_text(result: Any, p: Presentation) -> str:
    from compat.report.fleet import render_text

    return render_text(result, color=p.color, width=p.width)




_DOCTOR = {f.value: _doctor(f) for f in Format}

FORMATS: Mapping[str, Offer] = {
    "doctor": Offer(renderers=_DOCTOR),
    "report": Offer(renderers=_DOCTOR, default=Format.MARKDOWN.value),
    "explain": Offer(renderers={"text": _explain_text, "json": _explain_json, "markdown": _explain_markdown,
                                "github": _explain_github}),
    "plan": Offer(renderers=_plains("plan", "text", "json", "markdown", "github"),
                  describe={"text": "shell commands"}),
    "lock": Offer(renderers={f.value: _lock(f) for f in LockFormat}, default=LockFormat.REQUIREMENTS.value,
                  describe={"json": "the pins and why, for tools"}),
    "smoke": Offer(renderers=_plains("smoke", "text", "json", "markdown", "junit")),
    "fleet": Offer(renderers={"text": _fleet_text, **_plains("fleet", "json", "markdown", "github")}),
}
"""Command -> the formats it offers. The one table: `--format`, `--help` and docs/reference.md read it."""


def render(command: str, fmt: str, result: object, presentation: Presentation | None = None) -> str:
    """`result` of `command` in the format named `fmt` (one of `FORMATS[command].names`)."""
    return FORMATS[command].renderers[fmt](result, presentation or Presentation())
