"""Whether torch's libraries load, read from their ELF files (torch_libs.py, elf.py) on small written objects."""

from __future__ import annotations

import importlib.machinery
import struct
from pathlib import Path

import pytest

from compat.model.facts import Distribution
from compat.sources.probe.elf import NotElf, parse_ld_cache, read_elf
from compat.sources.probe.torch_libs import undecided
from tests.sources.probe.elf_fakes import write_elf, write_ld_cache

CUDART = "libcudart.so.13"
SYSTEM_LOADER = "/lib64/ld-linux-x86-64.so.2"


def _install(tmp_path: Path, *, stdcxx: tuple[str, ...] = ("GLIBCXX_3.4", "GLIBCXX_3.4.29"), cuda: bool = False,
             c10: bool = True) -> dict:
    """A site-packages with torch's two roots and their closure, a system directory and its loader cache."""
    site = tmp_path / "site-packages"
    torch = site / "torch"
    lib = torch / "lib"
    write_elf(torch / f"_C{importlib.machinery.EXTENSION_SUFFIXES[0]}", needed=("libtorch_python.so", "libc.so.6"),
              runpath="$ORIGIN:$ORIGIN/lib", wants={"libc.so.6": ("GLIBC_2.2.5",)})
    write_elf(lib / "libtorch_global_deps.so", soname="libtorch_global_deps.so", needed=("libc.so.6",), runpath="$ORIGIN")
    python_needs = ["libc10.so", "libstdc++.so.6", *([CUDART] if cuda else [])]
    write_elf(lib / "libtorch_python.so", soname="libtorch_python.so", needed=tuple(python_needs),
              runpath="$ORIGIN:$ORIGIN/../../nvidia/cu13/lib", wants={"libstdc++.so.6": ("GLIBCXX_3.4.29",)})
    if c10:
        write_elf(lib / "libc10.so", soname="libc10.so", needed=("libc.so.6",), runpath="$ORIGIN")
    if cuda:
        write_elf(site / "nvidia" / "cu13" / "lib" / CUDART, soname=CUDART, needed=("libc.so.6",), defines=("libcudart.so.13",))
    system = tmp_path / "usr" / "lib"
    libc = write_elf(system / "libc.so.6", soname="libc.so.6", defines=("libc.so.6", "GLIBC_2.2.5"))
    stdcxx_path = write_elf(system / "libstdc++.so.6", soname="libstdc++.so.6", needed=("libc.so.6",), defines=stdcxx)
    cache = write_ld_cache(tmp_path / "ld.so.cache", {"libc.so.6": str(libc), "libstdc++.so.6": str(stdcxx_path)})
    python = write_elf(tmp_path / "bin" / "python", needed=("libc.so.6",), interpreter=SYSTEM_LOADER)
    return {"directory": torch, "python": python, "ld_cache": cache, "environ": {}, "packages": (), "requires": (),
            "ld_preload": tmp_path / "ld.so.preload"}


def test_a_closure_found_where_torch_was_built_to_find_it_loads(tmp_path):
    assert undecided(**_install(tmp_path)) is None


def test_a_system_libstdcxx_without_the_version_torch_needs_is_left_to_the_load(tmp_path):
    why = undecided(**_install(tmp_path, stdcxx=("GLIBCXX_3.4",)))
    assert why is not None and "does not define GLIBCXX_3.4.29" in why


def test_a_missing_library_is_left_to_the_load(tmp_path):
    # torch's own import may still find it (it preloads the nvidia wheels' libraries when a load fails).
    why = undecided(**_install(tmp_path, c10=False))
    assert why == "libc10.so (needed by libtorch_python.so) is not found"


def test_a_cuda_runtime_from_the_wheel_torch_requires_loads(tmp_path):
    args = _install(tmp_path, cuda=True)
    wheel = Distribution(name="nvidia-cuda-runtime", version="13.0.96", requires=())
    args.update(packages=(wheel,), requires=("nvidia-cuda-runtime==13.0.96; platform_system == 'Linux'",))
    assert undecided(**args) is None


def test_a_wheel_at_a_version_torch_does_not_accept_is_left_to_the_load(tmp_path):
    args = _install(tmp_path, cuda=True)
    wheel = Distribution(name="nvidia-cuda-runtime", version="13.1.0", requires=())
    args.update(packages=(wheel,), requires=("nvidia-cuda-runtime==13.0.96",))
    why = undecided(**args)
    assert why is not None and "nvidia-cuda-runtime 13.1.0" in why


def test_a_cuda_runtime_on_ld_library_path_is_left_to_the_load(tmp_path):
    # A toolkit's libcudart taken before the wheel's is where an undefined symbol comes from.
    args = _install(tmp_path, cuda=True)
    toolkit = write_elf(tmp_path / "cuda" / "lib64" / CUDART, soname=CUDART, needed=("libc.so.6",))
    args["environ"] = {"LD_LIBRARY_PATH": f"{tmp_path / 'absent'}:{toolkit.parent}"}
    why = undecided(**args)
    assert why is not None and str(toolkit) in why and "LD_LIBRARY_PATH" in why


def test_on_ld_library_path_only_torch_and_the_nvidia_wheels_are_taken_as_theirs(tmp_path):
    args = _install(tmp_path, cuda=True)
    wheel = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    args["environ"] = {"LD_LIBRARY_PATH": str(wheel)}
    assert undecided(**args) is None
    other = write_elf(tmp_path / "site-packages" / "jaxlib" / "lib" / CUDART, soname=CUDART, needed=("libc.so.6",))
    args["environ"] = {"LD_LIBRARY_PATH": str(other.parent)}
    assert str(other) in (undecided(**args) or "")


def test_a_runtime_library_on_ld_library_path_is_checked_by_its_versions(tmp_path):
    args = _install(tmp_path)
    conda = write_elf(tmp_path / "conda" / "lib" / "libstdc++.so.6", soname="libstdc++.so.6", defines=("GLIBCXX_3.4",))
    args["environ"] = {"LD_LIBRARY_PATH": str(conda.parent)}
    assert "does not define GLIBCXX_3.4.29" in (undecided(**args) or "")
    write_elf(conda, soname="libstdc++.so.6", defines=("GLIBCXX_3.4", "GLIBCXX_3.4.29"))
    assert undecided(**args) is None


def test_a_library_of_another_machine_is_skipped_as_the_loader_skips_it(tmp_path):
    args = _install(tmp_path)
    other = write_elf(tmp_path / "arm" / "libc.so.6", soname="libc.so.6", defines=("GLIBC_2.2.5",), machine=183)
    args["environ"] = {"LD_LIBRARY_PATH": str(other.parent)}
    assert undecided(**args) is None


@pytest.mark.parametrize(("change", "expected"), [
    ({"environ": {"LD_PRELOAD": "/opt/libhook.so"}}, "LD_PRELOAD is set"),
    ({"ld_cache": Path("/nonexistent/ld.so.cache")}, "libc.so.6 (needed by libtorch_global_deps.so) is not found"),
])
def test_what_the_files_cannot_settle(tmp_path, change, expected):
    assert undecided(**{**_install(tmp_path), **change}) == expected


def test_a_program_with_its_own_rpath_is_left_to_the_load(tmp_path):
    args = _install(tmp_path)
    write_elf(args["python"], needed=("libc.so.6",), rpath="$ORIGIN/../lib", interpreter=SYSTEM_LOADER)
    assert "DT_RPATH" in (undecided(**args) or "")
    write_elf(args["python"], needed=("libc.so.6",), runpath="$ORIGIN/../lib", interpreter=SYSTEM_LOADER)  # RUNPATH serves its own needs only
    assert undecided(**args) is None


def test_an_extension_that_is_not_elf_is_left_to_the_load(tmp_path):
    args = _install(tmp_path)
    next(args["directory"].glob("_C*")).write_bytes(b"not a shared library")
    assert "could not be read" in (undecided(**args) or "")


def test_a_run_path_naming_lib_or_platform_is_left_to_the_load(tmp_path):
    args = _install(tmp_path)
    write_elf(args["directory"] / "lib" / "libtorch_global_deps.so", soname="libtorch_global_deps.so",
              needed=("libc.so.6",), runpath="$ORIGIN/$LIB")
    assert "$LIB" in (undecided(**args) or "")


def test_the_dynamic_section_read_back(tmp_path):
    path = write_elf(tmp_path / "libx.so", soname="libx.so", needed=("liba.so", "libb.so"), rpath="/r", runpath="$ORIGIN:/s",
                     wants={"liba.so": ("A_1", "A_2"), "libb.so": ("B_1",)}, defines=("libx.so", "X_1"))
    elf = read_elf(path)
    assert (elf.soname, elf.needed, elf.rpath, elf.runpath) == ("libx.so", ("liba.so", "libb.so"), ("/r",), ("$ORIGIN", "/s"))
    assert elf.wants == (("liba.so", ("A_1", "A_2")), ("libb.so", ("B_1",)))
    assert elf.defines == frozenset({"libx.so", "X_1"})


@pytest.mark.parametrize("data", [b"", b"\x7fELF\x01\x01" + bytes(58), b"\x7fELF\x02\x02" + bytes(58), b"#!/bin/sh\n" * 10])
def test_what_is_not_an_elf64_little_endian_file_is_refused(tmp_path, data):
    (tmp_path / "f").write_bytes(data)
    with pytest.raises(NotElf):
        read_elf(tmp_path / "f")


def test_the_loader_cache_read_back(tmp_path):
    cache = write_ld_cache(tmp_path / "c", {"libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6", "libm.so.6": "/lib/libm.so.6"})
    assert parse_ld_cache(cache.read_bytes()) == {"libc.so.6": ("/lib/x86_64-linux-gnu/libc.so.6",), "libm.so.6": ("/lib/libm.so.6",)}
    # The old format alone, or a truncated table, reads as no cache: the libraries are then not found from it.
    assert parse_ld_cache(b"ld.so-1.7.0" + bytes(40)) == {}
    assert parse_ld_cache(cache.read_bytes()[:60]) == {}


def _hostile(tmp_path: Path, phoff: int) -> Path:
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<HHQ", head, 0x10, 3, 62, 0)
    struct.pack_into("<Q", head, 0x20, phoff)
    struct.pack_into("<HH", head, 0x36, 56, 1)
    (tmp_path / "hostile.so").write_bytes(bytes(head))
    return tmp_path / "hostile.so"


@pytest.mark.parametrize("phoff", [2**63 - 1, 2**63 + 8, 2**64 - 1])
def test_an_offset_past_any_file_is_not_elf_rather_than_a_traceback(tmp_path, phoff):
    # Python's seek raises ValueError or OverflowError past 2**63, which undecided() does not catch.
    with pytest.raises(NotElf):
        read_elf(_hostile(tmp_path, phoff))


def test_a_hostile_extension_is_left_to_the_load(tmp_path):
    args = _install(tmp_path)
    next(args["directory"].glob("_C*")).write_bytes(_hostile(tmp_path, 2**64 - 1).read_bytes())
    assert "could not be read" in (undecided(**args) or "")


def test_version_records_are_bounded_in_all_not_per_library(tmp_path):
    # A hostile count of needed versions in each of 4096 records was 16M reads (a minute); the total is bounded.
    path = write_elf(tmp_path / "libx.so", soname="libx.so", wants={"liba.so": ("A_1",)})
    data = bytearray(path.read_bytes())
    strtab = 64 + 2 * 56
    need_at = data.index(struct.pack("<HH", 1, 1), strtab)  # vn_version 1, vn_cnt 1
    struct.pack_into("<H", data, need_at + 2, 4097)  # vn_cnt; the aux record's vna_next of 0 reads it again each time
    path.write_bytes(bytes(data))
    with pytest.raises(NotElf):
        read_elf(path)


@pytest.mark.parametrize("separator", [";", ":"])
def test_ld_library_path_is_split_as_glibc_splits_it(tmp_path, separator):
    # glibc separates LD_LIBRARY_PATH's elements with ':' or ';'; a toolkit's libcudart there is taken before the
    # wheel's (torch's libraries here name it in DT_RUNPATH, which comes after LD_LIBRARY_PATH).
    args = _install(tmp_path, cuda=True)
    toolkit = write_elf(tmp_path / "cuda" / "lib64" / CUDART, soname=CUDART, needed=("libc.so.6",))
    args["environ"] = {"LD_LIBRARY_PATH": f"{tmp_path / 'absent'}{separator}{toolkit.parent}"}
    assert str(toolkit) in (undecided(**args) or "")


@pytest.mark.parametrize("value", [":{absent}", "{absent}:", "{absent}::{absent}"])
def test_an_empty_ld_library_path_element_is_the_current_directory(tmp_path, monkeypatch, value):
    # `export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64` with it unset: the leading ':' is the cwd.
    args = _install(tmp_path, cuda=True)
    toolkit = write_elf(tmp_path / "cuda" / "lib64" / CUDART, soname=CUDART, needed=("libc.so.6",))
    monkeypatch.chdir(toolkit.parent)
    args["environ"] = {"LD_LIBRARY_PATH": value.format(absent=tmp_path / "absent")}
    assert str(toolkit) in (undecided(**args) or "")
    args["environ"] = {"LD_LIBRARY_PATH": str(tmp_path / "absent")}
    assert undecided(**args) is None


def test_an_empty_run_path_element_is_the_current_directory(tmp_path, monkeypatch):
    args = _install(tmp_path, cuda=True)
    write_elf(args["directory"] / "lib" / "libtorch_python.so", soname="libtorch_python.so",
              needed=("libc10.so", "libstdc++.so.6", CUDART), runpath=":$ORIGIN:$ORIGIN/../../nvidia/cu13/lib",
              wants={"libstdc++.so.6": ("GLIBCXX_3.4.29",)})
    toolkit = write_elf(tmp_path / "cuda" / "lib64" / CUDART, soname=CUDART, needed=("libc.so.6",))
    monkeypatch.chdir(toolkit.parent)
    assert str(toolkit) in (undecided(**args) or "")


@pytest.mark.parametrize("loader", ["/nix/store/abc-glibc-2.40/lib/ld-linux-x86-64.so.2",
                                    "/home/linuxbrew/.linuxbrew/lib/ld.so", None])
def test_a_program_run_by_another_loader_is_left_to_the_load(tmp_path, loader):
    # Nix's or Homebrew's glibc reads neither /etc/ld.so.cache nor /usr/lib: a pip torch there fails to find
    # libstdc++.so.6 where the system's loader would find it.
    args = _install(tmp_path)
    write_elf(args["python"], needed=("libc.so.6",), interpreter=loader)
    assert "loader" in (undecided(**args) or "")


def test_a_library_loaded_under_another_name_answers_to_its_soname(tmp_path):
    # The loader matches a request against the sonames of what is loaded: libc10 asking for libcudart.so.13 gets
    # the wheel's file libtorch_python loaded as libcudart.so, not the system's copy.
    args = _install(tmp_path)
    lib = args["directory"] / "lib"
    write_elf(lib / "libtorch_python.so", soname="libtorch_python.so", needed=("libcudart.so", "libc10.so"),
              runpath="$ORIGIN")
    write_elf(lib / "libcudart.so", soname=CUDART, needed=("libc.so.6",), defines=(CUDART,))
    write_elf(lib / "libc10.so", soname="libc10.so", needed=(CUDART,), runpath="/nonexistent", wants={CUDART: (CUDART,)})
    system = write_elf(tmp_path / "usr" / "lib" / CUDART, soname=CUDART, needed=("libc.so.6",))
    args["ld_cache"] = write_ld_cache(tmp_path / "ld2.cache", {"libc.so.6": str(tmp_path / "usr" / "lib" / "libc.so.6"),
                                                              CUDART: str(system)})
    assert undecided(**args) is None


def test_a_system_wide_preload_is_left_to_the_load(tmp_path):
    # /etc/ld.so.preload is LD_PRELOAD for every process: a preloaded old libstdc++ answers for torch's.
    args = _install(tmp_path)
    args["ld_preload"].write_text("\n")
    assert undecided(**args) is None
    args["ld_preload"].write_text("/opt/agent/libhook.so\n")
    assert "preload" in (undecided(**args) or "")


def test_a_32_bit_library_on_the_search_path_is_skipped_as_the_loader_skips_it(tmp_path):
    # A multilib host's 32-bit libstdc++ before the 64-bit one: the loader searches on ("wrong ELF class" is not fatal).
    args = _install(tmp_path)
    i386 = tmp_path / "i386" / "libstdc++.so.6"
    i386.parent.mkdir()
    i386.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(45))
    args["environ"] = {"LD_LIBRARY_PATH": str(i386.parent)}
    assert undecided(**args) is None
    i386.write_bytes(b"\x7fELF\x02\x02\x01" + bytes(57))  # a damaged header is an error the loader stops at
    assert "could not be read" in (undecided(**args) or "")
