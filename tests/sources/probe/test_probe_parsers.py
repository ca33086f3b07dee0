"""The pure halves of the small probes: tool versions, /etc/os-release, /proc/cpuinfo, requirements files."""

from __future__ import annotations

import pytest

from compat.errors import UsageError
from compat.model.unknown import Unknown
from compat.sources.probe._run import RunResult
from compat.sources.probe.requirements import read_requirements
from compat.sources.probe.system import parse_cpuinfo, parse_os_release, parse_tool
from tests.sources.probe.probe_fakes import DATA

# Recorded first lines of real tools (Ubuntu 22.04, CUDA 12.4 toolkit).
GCC = "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\nCopyright (C) 2021 Free Software Foundation, Inc.\n"
NVCC = (
    "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
    "Built on Thu_Mar_28_02:18:24_PDT_2024\nCuda compilation tools, release 12.4, V12.4.131\n"
)
CMAKE = "cmake version 3.22.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n"
CLANG = "Ubuntu clang version 14.0.0-1ubuntu1.1\nTarget: x86_64-pc-linux-gnu\n"


def _ran(name: str, stdout: str = "", returncode: int | None = 0, error: str | None = None, *,
         not_found: bool = False) -> RunResult:
    return RunResult(argv=(name, "--version"), returncode=returncode, stdout=stdout, stderr="", error=error,
                     not_found=not_found)


@pytest.mark.parametrize(
    ("name", "stdout", "version"),
    [("gcc", GCC, "11.4.0"), ("nvcc", NVCC, "12.4.131"), ("cmake", CMAKE, "3.22.1"), ("clang", CLANG, "14.0.0")],
)
def test_tool_versions_from_recorded_output(name, stdout, version):
    assert parse_tool(name, _ran(name, stdout)).version == version


def test_a_missing_tool_is_none_not_unknown():
    assert parse_tool("nvcc", _ran("nvcc", returncode=None, error="nvcc not found", not_found=True)).version is None
    # Decided by the outcome, not by the words: a message that happens to end so is still a failure.
    odd = parse_tool("nvcc", _ran("nvcc", returncode=None, error="nvcc could not be started: libfoo not found"))
    assert odd.version == Unknown(reason="nvcc could not be started: libfoo not found")


def test_a_failing_tool_says_how_it_failed():
    version = parse_tool("gcc", _ran("gcc", returncode=3))
    assert isinstance(version.version, Unknown)
    assert "3" in version.version.reason
    timed_out = parse_tool("cmake", _ran("cmake", returncode=None, error="cmake timed out after 10 s"))
    assert timed_out.version == Unknown(reason="cmake timed out after 10 s")


def test_a_tool_that_prints_no_version():
    assert parse_tool("clang", _ran("clang", "clang: warning: something\n")).version == Unknown(reason="clang printed no version")


def test_os_release_prefers_the_pretty_name():
    text = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n'
    assert parse_os_release(text) == "Ubuntu 22.04.4 LTS"
    assert parse_os_release('NAME="Rocky Linux"\n') == "Rocky Linux"
    assert isinstance(parse_os_release("ID=thing\n"), Unknown)
    unreadable = Unknown(reason="cannot read /etc/os-release: No such file or directory")
    assert parse_os_release(unreadable) is unreadable


def test_cpuinfo_counts_processors_and_names_the_model():
    text = "".join(f"processor\t: {i}\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\n" for i in range(4))
    assert parse_cpuinfo(text) == "Intel(R) Xeon(R) Platinum 8480+, 4 CPUs"
    assert parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n") == Unknown(reason="/proc/cpuinfo names no CPU model")


class _Release:
    def __init__(self, version: str, requires: tuple[str, ...] | None):
        from packaging.version import Version

        self.version = Version(version)
        self.requires = requires


class _Matrix:
    """Just what read_requirements reads: releases.get(name).releases."""

    class releases:
        @staticmethod
        def get(name):
            if name != "vllm":
                return None
            return type("P", (), {"releases": (_Release("0.7.2", ("torch==2.5.1",)), _Release("0.7.3", None))})()


def test_requirements_parser_skips_options_and_comments(tmp_path):
    req = tmp_path / "r.txt"
    req.write_text("# pinned\n--index-url https://example.invalid/simple\n-c constraints.txt\n\nvllm==0.7.2  # ok\nTRL===0.15.2\n")
    dists = {d.name: d for d in read_requirements(req, _Matrix())}
    assert sorted(dists) == ["trl", "vllm"]
    assert dists["vllm"].requires == ("torch==2.5.1",)
    assert dists["trl"].requires == ()


def test_requirements_parser_names_the_bad_line(tmp_path):
    req = tmp_path / "r.txt"
    req.write_text("vllm==0.7.2\nthis is not a requirement\n")
    with pytest.raises(UsageError, match=r"r\.txt:2: 'this is not a requirement' is not a requirement"):
        read_requirements(req, None)


def test_requirements_of_a_release_without_recorded_requirements(tmp_path):
    req = tmp_path / "r.txt"
    req.write_text("vllm==0.7.3\n")
    (dist,) = read_requirements(req, _Matrix())
    assert (dist.name, dist.version, dist.requires) == ("vllm", "0.7.3", ())


def test_an_unreadable_requirements_file(tmp_path):
    req = tmp_path / "r.txt"
    req.write_bytes(b"\xc3\x28\x00bad")  # not UTF-8, and no byte-order mark names another encoding
    with pytest.raises(UsageError, match="cannot read"):
        read_requirements(req, None)
    # A UTF-16 byte-order mark is read as UTF-16 (tests/fault/test_encodings.py): odd bytes after it are a bad line.
    req.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(UsageError, match="is not a requirement"):
        read_requirements(req, None)


def test_cuda_toolkit_version_from_its_version_json(tmp_path):
    from compat.sources.probe.system import parse_cuda_version_txt, read_cuda_toolkit

    root = tmp_path / "cuda-11.5"
    root.mkdir()
    (root / "version.json").write_text((DATA / "cuda" / "version.json").read_text(encoding="utf-8"), encoding="utf-8")
    assert read_cuda_toolkit(root) == "11.5.2"
    assert read_cuda_toolkit(tmp_path / "absent") is None
    bare = tmp_path / "bare"
    bare.mkdir()
    assert isinstance(read_cuda_toolkit(bare), Unknown)
    assert parse_cuda_version_txt("CUDA Version 10.2.89\n") == "10.2.89"
    (root / "version.json").write_text('{"cuda": {"version": null}}', encoding="utf-8")
    assert isinstance(read_cuda_toolkit(root), Unknown)
