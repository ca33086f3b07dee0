"""`compat smoke` in words: text, JSON, Markdown and JUnit, and explain's reading of a failing stage in one line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from compat import __version__
from compat.explain.records import Explanation, Match
from compat.explain.verdict import ErrorVerdict
from compat.model import codec
from compat.model.smoke import SCHEMA_VERSION, Diagnosis, SmokeReport, StageResult, Status, TrainLaunch, Verification
from compat.report.explain import _headline, api_text
from compat.report.markdown import escape

_MARKS = {Status.PASS: "pass", Status.FAIL: "FAIL", Status.SKIPPED: "skip"}


def diagnosis(explanation: Explanation) -> Diagnosis:
    """The best cause explain found: a catalog signature, else the API index's answer, else a version the message
    states, else a catch-all entry (generic: the stated requirement, where there is one, names more), else the root error."""
    roots = list(explanation.failures)
    verdict = explanation.verdict.value
    specific = [m for m in roots if not m.signature.generic]
    if specific:
        return _from_signature(verdict, specific[0])
    errors = [e for e in explanation.errors if not e.wrapper] or list(explanation.errors)
    known = next((e for e in errors if e.verdict is ErrorVerdict.KNOWN and e.api is not None), None)
    if known is not None and known.api is not None:
        words = api_text(known.api)
        either = " or ".join(known.api.fix)
        return Diagnosis(verdict=verdict, cause_id=f"api:{known.api.key}", title=words[0].removeprefix("api: ") if words
                         else _headline(known.root), fix=f"install {either}" if either else None)
    stated = next(((e, v) for e in errors if e.verdict is ErrorVerdict.KNOWN for v in e.versions
                   if (v.wanted or v.found) and v.satisfied is not True), None)
    if stated is not None:  # the message states the mismatch: the side to change is the cause
        error, v = stated
        return Diagnosis(verdict=verdict, cause_id=f"stated-version:{v.subject}", title=_headline(error.root), fix=v.command)
    if roots:
        return _from_signature(verdict, roots[0])
    if errors:
        return Diagnosis(verdict=verdict, cause_id=None, title=_headline(errors[0].root), fix=None)
    return Diagnosis(verdict=verdict, cause_id=None, title="no error found in the stage's output", fix=None)


def _from_signature(verdict: str, best: Match) -> Diagnosis:
    sig = best.signature
    fix = [*(["install " + ", ".join(sig.fix.requires)] if sig.fix.requires else []),
           *([sig.fix.advice] if sig.fix.advice else []), *best.notes]
    text = " ".join(part if part.rstrip().endswith((".", ")")) else part + "." for part in fix)
    return Diagnosis(verdict=verdict, cause_id=sig.id, title=sig.title, fix=text or None)


def render_json(report: SmokeReport) -> str:
    doc = {"schema_version": SCHEMA_VERSION, "compat_version": __version__, "failed": report.failed,
           **codec.encode(report)}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _verdict_line(report: SmokeReport) -> str:
    failed = [s.stage.value for s in report.stages if s.status is Status.FAIL]
    ran = [s for s in report.stages if s.status is not Status.SKIPPED]
    if failed:
        return f"FAILED: {', '.join(failed)} ({len(failed)} of {len(ran)} stage(s) run)"
    return f"passed: {len(ran)} stage(s) run, {len(report.stages) - len(ran)} skipped"


def _cause_lines(d: Diagnosis) -> list[str]:
    ident = f" [{d.cause_id}]" if d.cause_id else ""
    out = [f"explain: {d.verdict}{ident}: {d.title}"]
    if d.fix:
        out.append(f"fix: {d.fix}")
    return out


def _launch_lines(launch: TrainLaunch | None) -> list[str]:
    """The launcher and the user's config a launched run used, and what it did not exercise; nothing for the default
    launch (accelerate's, no config, no DeepSpeed file), whose steps name it ("accelerate launch x2: sft")."""
    if launch is None or launch.default:
        return []
    sharding = f" ({launch.distributed})" if launch.distributed else ""
    out = [f"launch: {launch.launcher} {' '.join(launch.arguments)}{sharding}" if launch.runs
           else f"launch: none ({launch.launcher} with {launch.config or launch.deepspeed})"]
    if launch.runs and launch.accelerate_arguments:
        out.append(f"each rank takes the variables of: accelerate launch {' '.join(launch.accelerate_arguments)}")
    out.extend(f"not exercised: {what}" for what in launch.not_exercised)
    return out


def render_text(report: SmokeReport) -> str:
    out = [f"compat smoke: {report.python}"]
    for s in report.stages:
        reason = f"  ({s.reason})" if s.reason else ""
        out.append(f"{_MARKS[s.status]:4}  {s.stage.value:10} {s.seconds:7.1f} s{reason}")
        out.extend(f"        {line}" for line in _launch_lines(s.launch))
        for step in s.steps:
            detail = f": {step.detail}" if step.detail else ""
            out.append(f"        {_MARKS[step.status]:4}  {step.name} ({step.seconds:.1f} s){detail}")
        if s.diagnosis is not None:
            out.extend(f"        {line}" for line in _cause_lines(s.diagnosis))
        if s.status is Status.FAIL and s.output:
            out.append("        output (last lines):")
            out.extend(f"          | {line}" for line in s.output.splitlines())
    out.append(f"{_verdict_line(report)}; {report.seconds:.1f} s of a {report.budget_s:g} s budget")
    return "\n".join(out) + "\n"


def render_markdown(report: SmokeReport) -> str:
    out = [f"### compat smoke: {escape(_verdict_line(report))}", "",
           f"Interpreter `{report.python}`, {report.seconds:.1f} s of a {report.budget_s:g} s budget.", "",
           "| stage | result | seconds | reason |", "|---|---|---:|---|"]
    for s in report.stages:
        out.append(f"| {s.stage.value} | {_MARKS[s.status]} | {s.seconds:.1f} | {escape(s.reason or '')} |")
    for s in report.stages:
        if launch := _launch_lines(s.launch):
            out += ["", f"{s.stage.value}'s launched run:", "", *(f"- {escape(line)}" for line in launch)]
    for s in report.stages:
        if s.status is not Status.FAIL:
            continue
        out += ["", f"#### {s.stage.value} failed"]
        if s.diagnosis is not None:
            out += ["", *(f"- {escape(line)}" for line in _cause_lines(s.diagnosis))]
        if s.output:
            out += ["", "<details><summary>output (last lines)</summary>", "", "```", s.output.replace("```", "'''"),
                    "```", "", "</details>"]
    return "\n".join(out) + "\n"


def _case_text(s: StageResult) -> str:
    lines = [f"{step.status.value}: {step.name}" + (f": {step.detail}" if step.detail else "") for step in s.steps]
    if s.diagnosis is not None:
        lines += _cause_lines(s.diagnosis)
    if s.output:
        lines += ["", s.output]
    return "\n".join(lines)


def render_junit(report: SmokeReport) -> str:
    """JUnit XML: one test case per stage; a failed stage is a failure, a skipped one skipped with its reason."""
    suite = ET.Element("testsuite", name="compat smoke", time=f"{report.seconds:.3f}")
    failures = skipped = 0
    for s in report.stages:
        case = ET.SubElement(suite, "testcase", classname="compat.smoke", name=s.stage.value, time=f"{s.seconds:.3f}")
        if s.status is Status.FAIL:
            failure = ET.SubElement(case, "failure", message=s.reason or "failed", type="fail")
            failure.text = _case_text(s)
            failures += 1
        elif s.status is Status.SKIPPED:
            ET.SubElement(case, "skipped", message=s.reason or "skipped")
            skipped += 1
        if launch := _launch_lines(s.launch):
            ET.SubElement(case, "system-out").text = "\n".join(launch)
    suite.set("tests", str(len(report.stages)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def render_progress(result: StageResult) -> str:
    """One line on stderr as each stage ends."""
    return f"compat smoke: {result.stage.value}: {result.status.value} ({result.seconds:.1f} s)\n"


def render_verification(v: Verification) -> str:
    """What `compat lock --verify` proved on this machine, what it could not, and whether the lock is written."""
    if v.install_error is not None or v.smoke is None:
        return f"compat lock --verify: the lock is not written: the set did not install ({v.install_s:.1f} s): " \
               f"{v.install_error}\n"
    out = [render_text(v.smoke).rstrip("\n"), f"installed in a throwaway venv in {v.install_s:.1f} s"]
    ran = [s for s in v.smoke.stages if s.status is Status.PASS]
    skipped = [s for s in v.smoke.stages if s.status is Status.SKIPPED]
    failed = [s for s in v.smoke.stages if s.status is Status.FAIL]
    if ran:
        out.append("verified here: " + ", ".join(s.stage.value + (f" ({', '.join(v.smoke.trainers)})" if
                                                                   s.stage.value == "train" else "") for s in ran))
    if skipped:
        out.append("not verified here: " + "; ".join(f"{s.stage.value}: {s.reason}" for s in skipped))
    if failed:
        out.append("compat lock --verify: the lock is not written: " + ", ".join(s.stage.value for s in failed)
                   + " failed in the installed set")
    return "\n".join(out) + "\n"
