"""`doctor -r`: requirements files as pip reads them, and PEP 751 pylock.toml files."""

from __future__ import annotations

import pytest

from compat.errors import UsageError
from compat.sources.probe.requirements import read_requirements

PY311 = {"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}


def _pins(path, markers=PY311) -> dict[str, str]:
    return {d.name: d.version for d in read_requirements(path, None, markers=markers)}


def test_constraints_includes_hashes_markers_and_continuations(tmp_path):
    (tmp_path / "constraints.txt").write_text("numpy<2\nnot even a requirement ~~\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.txt").write_text("accelerate==1.9.0\n-r ../main.txt\n")  # a loop: read once
    (tmp_path / "main.txt").write_text(
        "-c constraints.txt\n"
        "--constraint=constraints.txt\n"
        "-r sub/base.txt\n"
        "transformers==4.55.0 \\\n"
        "    --hash=sha256:aaaa \\\n"
        "    --hash=sha256:bbbb\n"
        "torch==2.6.0 ; sys_platform == 'linux'  # the CUDA build\n"
        "pywin32==306 ; sys_platform == 'win32'\n"
        "triton==3.2.0 ; python_version >= '3.12'\n"
    )
    # constraints install nothing: not read (their unparseable line would otherwise be an error)
    assert _pins(tmp_path / "main.txt") == {"accelerate": "1.9.0", "transformers": "4.55.0", "torch": "2.6.0"}
    # markers are the judged interpreter's, not compat's own
    assert "triton" in _pins(tmp_path / "main.txt", {**PY311, "python_version": "3.12"})


def test_an_include_that_is_missing_is_named(tmp_path):
    (tmp_path / "r.txt").write_text("-r nope.txt\n")
    with pytest.raises(UsageError, match=r"nope\.txt does not exist"):
        _pins(tmp_path / "r.txt")


def test_an_unpinned_line_in_an_include_names_file_and_line(tmp_path):
    (tmp_path / "inc.txt").write_text("\n\ntrl>=0.15\n")
    (tmp_path / "r.txt").write_text("-rinc.txt\n")
    with pytest.raises(UsageError, match=r"inc\.txt:3: 'trl>=0.15' is not pinned"):
        _pins(tmp_path / "r.txt")


PYLOCK = """\
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "torch"
version = "2.6.0"
index = "https://example.invalid/simple"
wheels = [{ url = "https://example.invalid/torch-2.6.0-cp311-cp311-linux_x86_64.whl", hashes = { sha256 = "00" } }]

[[packages]]
name = "Transformers"
version = "4.55.0"

[[packages]]
name = "pywin32"
version = "306"
marker = "sys_platform == 'win32'"
"""


def test_a_pylock_is_read_as_pep_751(tmp_path):
    lock = tmp_path / "pylock.toml"
    lock.write_text(PYLOCK)
    assert _pins(lock) == {"torch": "2.6.0", "transformers": "4.55.0"}
    named = tmp_path / "x.pylock.toml"
    named.write_text(PYLOCK)
    assert _pins(named) == _pins(lock)


@pytest.mark.parametrize(("text", "message"), [
    ("lock-version = '1.0'\n", "no \\[\\[packages\\]\\] table"),
    ("not toml = = =\n", "not a TOML file"),
    ("[[packages]]\nname = 'vllm'\n[packages.vcs]\ntype = 'git'\n", "'vllm'\\): no version"),
    ("[[packages]]\nversion = '1.0'\n", r"packages\[0\]\.name: missing"),
    ("[[packages]]\nname = 'a'\nversion = '1'\nmarker = 'python_version <'\n", r"packages\[0\]\.marker"),
    ("[[packages]]\nname = 'torch'\nversion = 'x.y'\n", r"packages\[0\]\.version: 'x\.y' is not a version"),
    ("[[packages]]\nname = 'torch'\nversion = '2.4.0'\n[[packages]]\nname = 'a'\nversion = ''\n", r"packages\[1\]\.version"),
])
def test_a_bad_pylock_is_one_line_naming_the_entry(tmp_path, text, message):
    lock = tmp_path / "pylock.toml"
    lock.write_text(text)
    with pytest.raises(UsageError, match=message) as info:
        _pins(lock)
    assert "\n" not in str(info.value)


def test_a_wheel_url_line_is_pinned_by_the_wheels_file_name(tmp_path):
    # compat's own locks write vLLM's other CUDA builds as a direct reference to the release asset.
    url = "https://github.com/vllm-project/vllm/releases/download/v0.30.0/vllm-0.30.0+cu129-cp38-abi3-manylinux_2_28_x86_64.whl"
    (tmp_path / "r.txt").write_text(f"vllm @ {url}\ntorch==2.13.0+cu126\n")
    assert _pins(tmp_path / "r.txt") == {"vllm": "0.30.0+cu129", "torch": "2.13.0+cu126"}


@pytest.mark.parametrize("line", ["trl @ git+https://github.com/huggingface/trl@main",
                                  "vllm @ https://example.invalid/vllm-0.30.0.tar.gz",
                                  "vllm @ https://example.invalid/torch-2.13.0-cp312-cp312-linux_x86_64.whl"])
def test_a_direct_reference_to_no_wheel_of_that_package_is_refused(tmp_path, line):
    (tmp_path / "r.txt").write_text(line + "\n")
    with pytest.raises(UsageError, match=r"r\.txt:1: .* is a direct reference to no wheel"):
        _pins(tmp_path / "r.txt")
