"""CI formats of `compat doctor`: GitHub workflow commands, SARIF 2.1.0 and JUnit XML. Pure: records in, str out.

Each format carries the same verdict as the text report: found findings at their severity, checks
that could not run (failures under --strict), findings the project ignores (with the reason) and
ignores that expired (failures).
"""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from compat import __version__
from compat.model import codec
from compat.model.config import Waivers
from compat.model.findings import Finding, Severity, Status
from compat.printable import one_line, xml_safe
from compat.report.doctor import evidence_text, summary_counts
from compat.report.essentials import fix_text
from compat.report.links import finding_url

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

# Where a SARIF result points when the run named no file: GitHub code scanning rejects a whole log
# whose results have no location, and pyproject.toml is where a project's [tool.compat] (and its
# ignores) would go. Documented in docs/ci.md.
SARIF_DEFAULT_ARTIFACT = "pyproject.toml"

_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _counts(findings: tuple[Finding, ...]) -> str:
    c = summary_counts(findings)
    return f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} info, {c['cannot-check']} could not run"


# ----------------------------------------------------------------------------- GitHub


def _data(text: str) -> str:
    # Line breaks are encoded, not printed: a raw one would let an input start a workflow command.
    text = xml_safe(text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, title: str, message: str, file: str | None = None) -> str:
    """One GitHub workflow command (`::error title=...::...`), its title and message encoded so that no input ends it."""
    props = [f"title={_prop(title)}"]
    if file:
        props.insert(0, f"file={_prop(file)}")
    return f"::{level} {','.join(props)}::{_data(message)}"


def render_github(
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
    report_url: str | None = None,
    file: str | None = None,
) -> str:
    """Workflow commands (`::error title=...::...`): one annotation per finding, then a summary line."""
    waivers = waivers or Waivers()
    lines = []
    for f in findings:
        url = finding_url(report_url, f.id)
        more = f" See {url}" if url else ""
        if f.status is Status.FOUND:
            message = " ".join(p for p in (f.cause, f"Seen: {evidence_text(f.evidence)}." if f.evidence else "",
                                           f"Fix: {fix_text(f.fix)}" if fix_text(f.fix) else "") if p)
            lines.append(annotation(_GITHUB_LEVEL[f.severity], f"compat: {f.title} [{f.id}]", message + more, file))
        else:
            counts = strict and f.severity.rank >= fail_on.rank
            lines.append(annotation("error" if counts else "notice", f"compat: cannot check [{f.id}]",
                                  f"{f.title}: {'; '.join(f.unknown)}" + (" (--strict: this fails the run)" if counts else ""),
                                  file))
    for w in waivers.ignored:
        until = f" until {w.ignore.until.isoformat()}" if w.ignore.until else ""
        lines.append(annotation("notice", f"compat: ignored [{w.finding.id}]",
                                f"{w.finding.title}. Ignored{until}: {w.ignore.reason}", file))
    for i in waivers.expired:
        assert i.until is not None
        lines.append(annotation("error", f"compat: expired ignore [{i.id}]",
                              f"The ignore of {i.id} expired on {i.until.isoformat()} ({i.reason}); the finding counts again.", file))
    lines.append(f"compat doctor: {_counts(findings)}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- SARIF


def render_sarif(
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    report_url: str | None = None,
    file: str | None = None,
) -> str:
    """A SARIF 2.1.0 log: one rule per finding id, one result per finding; ignored ones carry a suppression.

    Every result has a location: `file`, else SARIF_DEFAULT_ARTIFACT.
    """
    waivers = waivers or Waivers()
    uri = file or SARIF_DEFAULT_ARTIFACT
    every = [(f, None) for f in findings] + [(w.finding, w.ignore) for w in waivers.ignored]
    rules: dict[str, dict[str, object]] = {}
    for f, _ in every:
        if f.id in rules:
            continue
        rule: dict[str, object] = {
            "id": f.id,
            "shortDescription": {"text": f.title},
            "fullDescription": {"text": f.cause or f.title},
            "defaultConfiguration": {"level": _SARIF_LEVEL[f.severity]},
            "properties": {"tags": ["compat", f.severity.value]},
        }
        fix = fix_text(f.fix)
        if fix:
            rule["help"] = {"text": fix}
        url = finding_url(report_url, f.id)
        if url:
            rule["helpUri"] = url
        rules[f.id] = rule
    order = sorted(rules)
    results = []
    for f, ignore in every:
        result: dict[str, object] = {
            "ruleId": f.id,
            "ruleIndex": order.index(f.id),
            "message": {"text": _sarif_message(f)},
        }
        if f.status is Status.FOUND:
            result["kind"] = "fail"
            result["level"] = _SARIF_LEVEL[f.severity]
        else:
            result["kind"] = "open"  # undecided: SARIF's "not enough information to decide"
            result["level"] = "none"
        result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": uri}}}]
        if f.evidence:  # the records, for tools that read more than the message (a SARIF property bag)
            result["properties"] = {"evidence": [codec.encode(e) for e in f.evidence]}
        if ignore is not None:
            suppression: dict[str, object] = {"kind": "external", "status": "accepted", "justification": ignore.reason}
            if ignore.until:
                suppression["properties"] = {"until": ignore.until.isoformat()}
            result["suppressions"] = [suppression]
        results.append(result)
    driver: dict[str, object] = {"name": "compat", "version": __version__, "rules": [rules[i] for i in order]}
    if report_url:
        driver["informationUri"] = report_url
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "results": results,
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": f"expired ignore of {i.id} ({i.until}): {i.reason}"}}
                    for i in waivers.expired
                ],
            }],
        }],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _sarif_message(f: Finding) -> str:
    if f.status is Status.CANNOT_CHECK:
        return f"Cannot check: {f.title}: {'; '.join(f.unknown)}"
    seen = f" Seen: {evidence_text(f.evidence)}." if f.evidence else ""
    fix = fix_text(f.fix)
    return f"{f.title}.{seen}" + (f" Fix: {fix}" if fix else "")


# ----------------------------------------------------------------------------- JUnit


def render_junit(
    findings: tuple[Finding, ...],
    *,
    waivers: Waivers | None = None,
    strict: bool = False,
    fail_on: Severity = Severity.ERROR,
    report_url: str | None = None,
) -> str:
    """JUnit XML: one test case per finding. A finding at or above `fail_on` (or undecided under
    strict, or with an expired ignore) is a failure; the rest are skipped with the reason."""
    waivers = waivers or Waivers()
    expired = {i.id: i for i in waivers.expired}
    suite = ET.Element("testsuite", name="compat doctor")
    failures = skipped = 0
    cases = [(f, None) for f in findings] + [(w.finding, w.ignore.reason) for w in waivers.ignored]
    seen: dict[str, int] = {}
    for f, ignored in cases:
        seen[f.id] = seen.get(f.id, 0) + 1
        # one id can be found several times (four missing requirements): names stay unique per suite
        name = f.id if seen[f.id] == 1 else f"{f.id} #{seen[f.id]}"
        case = ET.SubElement(suite, "testcase", classname=f"compat.{f.severity.value}", name=name)
        reaches = f.severity.rank >= fail_on.rank
        if ignored is not None:
            ET.SubElement(case, "skipped", message=f"ignored: {ignored}")
            skipped += 1
        elif f.status is Status.FOUND and (reaches or f.id in expired):
            failure = ET.SubElement(case, "failure", message=f.title, type=f.severity.value)
            url = finding_url(report_url, f.id)
            # One line per part: a line break inside an input value would start a line of its own.
            failure.text = "\n".join(one_line(p) for p in (f.cause, evidence_text(f.evidence), fix_text(f.fix), *f.fix.commands,
                                                            f"See {url}" if url else "") if p)
            failures += 1
        elif f.status is Status.CANNOT_CHECK and strict and reaches:
            ET.SubElement(case, "failure", message=f"cannot check: {'; '.join(f.unknown)}", type="cannot-check")
            failures += 1
        else:
            reason = f"cannot check: {'; '.join(f.unknown)}" if f.status is Status.CANNOT_CHECK else f"{f.severity.value}: {f.title}"
            ET.SubElement(case, "skipped", message=reason)
            skipped += 1
    if not cases:
        ET.SubElement(suite, "testcase", classname="compat", name="doctor")
    suite.set("tests", str(max(len(cases), 1)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
    _xml_safe(suite)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def _xml_safe(root: ET.Element) -> None:
    """Every text and attribute of the tree without what XML 1.0 forbids; attributes on one line.

    ElementTree escapes markup but writes a control character as it is, and a parser then rejects
    the whole report.
    """
    for element in root.iter():
        if element.text:
            element.text = xml_safe(element.text)
        for key, value in element.attrib.items():
            element.set(key, one_line(xml_safe(value)))
