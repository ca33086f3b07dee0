"""The config file: where it is found, what it may say, and what its ignore list does to a run."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.model.config import Ignore
from compat.sources.config import find_config, load_config
from tests.support.paths import FACTS_300

IGNORES = """
fail-on = "error"
ignore = [
  { id = "grpo-fsdp-ref-model-on-cpu", reason = "beta=0: no reference model", until = "2999-01-31" },
  { id = "missing-requirement", reason = "numpy comes from the base image" },
]
"""


def test_found_upward_compat_toml_before_pyproject(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.compat]: passed over
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_config() is None or tmp_path not in find_config().resolve().parents
    (tmp_path / "pyproject.toml").write_text('[tool.compat]\ngpus = "8xH100"\n')
    assert find_config() == tmp_path / "pyproject.toml"
    assert load_config(tmp_path / "pyproject.toml").gpus == "8xH100"
    (tmp_path / "a" / "compat.toml").write_text('driver = "550.54.15"\n')
    assert find_config() == tmp_path / "a" / "compat.toml"
    monkeypatch.chdir(tmp_path)
    assert find_config() == Path("pyproject.toml")  # relative inside the working directory


@pytest.mark.parametrize(("text", "message"), [
    ('gpu = "8xH100"', "compat.toml: gpu: unknown key"),
    ('fail-on = "fatal"', "compat.toml: fail-on: 'fatal' is not one of error, warning, info"),
    ("strict = 1", "strict: expected true or false"),
    ('ignore = "x"', "ignore: expected a list of tables"),
    ('ignore = [{ id = "x" }]', "ignore[0].reason: required, a non-empty string"),
    ('ignore = [{ id = "x", reason = "r", until = "soon" }]', "ignore[0].until: 'soon' is not a date (YYYY-MM-DD)"),
    ('ignore = [{ id = "x", reason = "r", until = 2027-01-01T00:00:00 }]', "ignore[0].until: expected a date"),
    ('ignore = [{ id = "x", reason = "r", owner = "me" }]', "ignore[0].owner: unknown key"),
    ("ignore = [1]", "ignore[0]: expected a table"),
    ("driver = 550", "driver: expected a string"),
    ("= broken", "not TOML"),
])
def test_bad_config_is_one_line_naming_the_key(tmp_path, text, message):
    path = tmp_path / "compat.toml"
    path.write_text(text + "\n")
    with pytest.raises(UsageError) as info:
        load_config(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_pyproject_keys_are_named_under_tool_compat(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.compat]\nfailon = "x"\n')
    with pytest.raises(UsageError, match=r"tool\.compat\.failon: unknown key"):
        load_config(path)
    path.write_text('[tool]\ncompat = 3\n')
    with pytest.raises(UsageError, match=r"tool\.compat: expected a table"):
        load_config(path)


def test_toml_dates_are_accepted(tmp_path):
    path = tmp_path / "compat.toml"
    path.write_text('ignore = [{ id = "x", reason = "r", until = 2027-01-31 }]\n')
    assert load_config(path).ignore == (Ignore(id="x", reason="r", until=date(2027, 1, 31)),)


def test_ignored_findings_leave_the_verdict_and_say_why(cli, tmp_path):
    (tmp_path / "compat.toml").write_text(IGNORES)
    code, out = cli("doctor", "--json", "--facts", str(FACTS_300))
    report = json.loads(out)
    assert code == 0, out
    # Nothing is left: the API timeline's feature-only links are listed only with --feature-links (as info).
    assert [f["id"] for f in report["findings"] if f["status"] == "found"] == []
    assert {i["finding"]["id"] for i in report["ignored"]} == {"grpo-fsdp-ref-model-on-cpu", "missing-requirement"}
    assert report["expired_ignores"] == []
    code, text = cli("doctor", "--facts", str(FACTS_300))
    assert code == 0
    assert "ignored until 2999-01-31: grpo-fsdp-ref-model-on-cpu (error): beta=0: no reference model" in text


def test_an_expired_ignore_no_longer_applies_and_fails_the_run(cli, tmp_path):
    (tmp_path / "compat.toml").write_text(
        'fail-on = "error"\nignore = [{ id = "grpo-fsdp-ref-model-on-cpu", reason = "until the TRL bump", until = "2020-01-31" },'
        ' { id = "missing-requirement", reason = "base image" }]\n'
    )
    code, text = cli("doctor", "--facts", str(FACTS_300))
    assert code == 1
    assert "expired ignore: grpo-fsdp-ref-model-on-cpu was ignored until 2020-01-31 (until the TRL bump)" in text
    assert "GRPO under FSDP leaves the reference model on the CPU" in text  # back in the report
    # even below the threshold, an expired ignore whose finding is present fails the run
    (tmp_path / "compat.toml").write_text(
        'ignore = [{ id = "missing-requirement", reason = "base image", until = "2020-01-01" },'
        ' { id = "grpo-fsdp-ref-model-on-cpu", reason = "x" }]\n'
    )
    code, _ = cli("doctor", "--facts", str(FACTS_300), "--fail-on", "error")
    assert code == 1
    code, out = cli("doctor", "--format", "github", "--facts", str(FACTS_300))
    assert code == 1
    assert "::error file=compat.toml,title=compat%3A expired ignore [missing-requirement]::" in out


def test_unused_ignores_are_pointed_out(cli, tmp_path):
    (tmp_path / "compat.toml").write_text('ignore = [{ id = "never-seen", reason = "old" }]\n')
    _, text = cli("doctor", "--facts", str(FACTS_300))
    assert "unused ignore: never-seen was not reported; remove it from compat.toml" in text


def test_config_declares_hardware_and_the_command_line_wins(cli, tmp_path):
    (tmp_path / "compat.toml").write_text('gpus = "1xRTX5090"\ndriver = "570.86.10"\nfail-on = "info"\n')
    code, out = cli("doctor", "--json", "--facts", str(FACTS_300))
    facts = json.loads(out)["facts"]
    assert facts["hardware"]["gpus"][0]["name"].endswith("5090") and facts["hardware"]["driver"] == "570.86.10"
    assert code == 1
    _, out = cli("doctor", "--json", "--facts", str(FACTS_300), "--gpus", "2xA100")
    assert "A100" in json.loads(out)["facts"]["hardware"]["gpus"][0]["name"]
    _, out = cli("doctor", "--json", "--no-config", "--facts", str(FACTS_300))
    assert json.loads(out)["facts"]["hardware"]["driver"] == "550.54.15"


def test_explicit_config_and_its_errors(cli, tmp_path):
    bad = tmp_path / "elsewhere.toml"
    bad.write_text("strict = true\nfail-on = \"warning\"\n")
    code, _ = cli("doctor", "--facts", str(FACTS_300), "--config", str(bad))
    assert code == 1


def test_strict_names_the_checks_that_could_not_run(cli):
    code, text = cli("doctor", "--facts", str(FACTS_300), "--gpus", "8xH100", "--strict", "--fail-on", "info")
    assert code == 1
    assert re.search(r"--strict: exit 1 because (\d+) check\(s\) at info or worse could not run: [-a-z, ]*nccl-shm-too-small", text)
    _, text = cli("doctor", "--facts", str(FACTS_300))
    assert "--strict: exit" not in text


def test_text_report_links_each_finding_page(cli):
    _, text = cli("doctor", "--facts", str(FACTS_300), env={"COMPAT_REPORT_URL": "https://example.org/m/"})
    pages = text.splitlines()[-1]
    assert pages.startswith("pages: https://example.org/m/findings/")
    assert "https://example.org/m/findings/grpo-fsdp-ref-model-on-cpu.html" in pages.split()
    assert pages.count("missing-requirement") == 1


def test_explain_links_its_matches(cli):
    log = FACTS_300.parent.parent / "logs" / "cuda-driver-too-old.log"
    code, text = cli("explain", str(log), "--no-env", "--top", "1", "--report-url", "https://example.org")
    assert code == 0
    assert text.endswith("pages: https://example.org/findings/cuda-driver-too-old.html\n")
    _, plain = cli("explain", str(log), "--no-env", "--top", "1")
    assert "pages:" not in plain
