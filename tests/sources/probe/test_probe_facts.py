"""probe() end to end on this host (no GPU), -r files, and the Facts JSON round trip."""

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.errors import UsageError
from compat.model.facts import (
    AccelerateConfig,
    Distribution,
    Facts,
    Gpu,
    Hardware,
    HardwareSource,
    Interconnect,
    Launch,
    Launcher,
    Link,
    Python,
    Script,
    TorchBuild,
    TorchSource,
    dump_facts,
    load_facts,
)
from compat.model.unknown import Unknown
from compat.sources.probe import ProbeRequest, probe, probe_launch_and_script
from compat.sources.probe.requirements import read_requirements
from tests.sources.probe.probe_fakes import DATA
from tests.support.facts import facts, interpreter, launch_by


def test_probe_without_hardware_never_touches_the_gpu_tools(monkeypatch, tmp_path):
    import compat.sources.probe.nvidia as nvidia

    def boom(**kw):
        raise AssertionError("hardware probed")

    monkeypatch.setattr(nvidia, "probe_hardware", boom)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    facts = probe(ProbeRequest(hardware=False, python=Path(sys.executable)), None)
    assert facts.hardware.source is HardwareSource.DECLARED
    assert facts.python.executable == sys.executable
    assert any(d.name == "packaging" for d in facts.packages)
    assert load_facts(dump_facts(facts)) == facts


def test_probe_with_script_stub_until_the_reader_lands(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    facts = probe(ProbeRequest(hardware=False, script=script, python=Path(sys.executable)), None)
    assert facts.script is not None and facts.script.path == str(script)


def test_requirements_file_replaces_installed_packages(tmp_path, monkeypatch):
    req = tmp_path / "requirements.txt"
    req.write_text("--extra-index-url https://example.invalid/whl/cu124\n# pins\ntorch==2.5.1+cu124\nTRL[vllm,Peft]==0.15.2\nvllm==0.7.2 ; sys_platform == 'linux'\n")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    facts = probe(ProbeRequest(requirements=req, hardware=False, python=Path(sys.executable)), None)
    assert [(d.name, d.version) for d in facts.packages] == [("torch", "2.5.1+cu124"), ("trl", "0.15.2"), ("vllm", "0.7.2")]
    assert facts.torch.source is TorchSource.METADATA and facts.torch.cuda == "12.4"
    assert facts.torch.import_error is None
    # the one record of the extras asked for: installed metadata keeps none
    assert facts.requested == ("trl[peft,vllm]",)


def test_requirements_requires_come_from_the_matrix(tmp_path):
    from packaging.requirements import Requirement
    from packaging.version import Version

    class Rel:
        version = Version("0.15.2")
        requires = (Requirement("transformers>=4.46.0"),)

    class Index:
        def get(self, name):
            return type("P", (), {"releases": (Rel,)})() if name == "trl" else None

    matrix = type("M", (), {"releases": Index()})()
    req = tmp_path / "r.txt"
    req.write_text("trl==0.15.2\ntorch==2.5.1\n")
    dists = {d.name: d for d in read_requirements(req, matrix)}
    assert dists["trl"].requires == ("transformers>=4.46.0",)
    assert dists["torch"].requires == ()


@pytest.mark.parametrize("line", ["trl>=0.15", "trl", "vllm==0.7.*"])
def test_unpinned_requirement_is_a_one_line_usage_error(tmp_path, line):
    req = tmp_path / "r.txt"
    req.write_text(f"torch==2.5.1\n{line}\n")
    with pytest.raises(UsageError, match="not pinned") as info:
        read_requirements(req, None)
    assert "\n" not in str(info.value)


def test_missing_requirements_file(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        read_requirements(tmp_path / "nope.txt", None)


def test_launch_and_script_on_a_saved_snapshot(tmp_path):
    base = _facts()
    out = probe_launch_and_script(base, accelerate_config=DATA / "accelerate" / "zero3.yaml", script=None)
    assert out.launch.accelerate.zero_stage == 3
    assert out.python == base.python and out.launch.env == base.launch.env


# ---------------------------------------------------------------- round trip


def _facts() -> Facts:
    return facts(
        python=interpreter(version="3.11.7", executable="/usr/bin/python3", markers={"python_version": "3.11"}, glibc="2.36"),
        packages=(Distribution(name="torch", version="2.5.1+cu124", requires=("filelock",)),),
        launch=launch_by(Unknown(reason="not declared"), env={"NCCL_DEBUG": "INFO"}, shm_bytes=64 * 2**20),
    )


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
unknown = st.builds(Unknown, reason=text)


def maybe(strategy, *, none=True):
    options = [strategy, unknown] + ([st.none()] if none else [])
    return st.one_of(*options)


gpus = st.builds(Gpu, index=st.integers(0, 15), name=text, compute_capability=maybe(text, none=False),
                 memory_mib=maybe(st.integers(0, 2**20), none=False), bus_id=maybe(text, none=False))
links = st.builds(Link, a=st.integers(0, 7), b=st.integers(0, 7), interconnect=maybe(st.sampled_from(Interconnect), none=False),
                  nvlinks=st.integers(0, 18), p2p=maybe(st.booleans(), none=False))
facts_strategy = st.builds(
    Facts,
    schema_version=st.just(1),
    python=st.builds(Python, version=text, implementation=text, executable=maybe(text, none=False),
                     markers=st.dictionaries(text, text, max_size=3), glibc=maybe(text)),
    packages=st.one_of(unknown, st.lists(st.builds(Distribution, name=text, version=text, requires=st.lists(text, max_size=3).map(tuple),
                                                  installer=st.one_of(st.none(), text)), max_size=3).map(tuple)),
    torch=st.one_of(st.none(), unknown, st.builds(
        TorchBuild, version=text, cuda=maybe(text), cudnn=maybe(text), nccl=maybe(text),
        arch_list=st.one_of(unknown, st.lists(text, max_size=3).map(tuple)), cxx11_abi=maybe(st.booleans(), none=False),
        source=st.sampled_from(TorchSource), import_error=st.one_of(st.none(), text))),
    hardware=st.builds(Hardware, source=st.sampled_from(HardwareSource), driver=maybe(text), driver_cuda=maybe(text),
                       gpus=st.one_of(unknown, st.lists(gpus, max_size=3).map(tuple)),
                       links=st.one_of(unknown, st.lists(links, max_size=3).map(tuple))),
    launch=st.builds(Launch, launcher=maybe(st.sampled_from(Launcher), none=False),
                     accelerate=st.one_of(st.none(), unknown, st.builds(
                         AccelerateConfig, path=text, distributed_type=st.one_of(st.none(), text),
                         num_processes=st.one_of(st.none(), st.integers(0, 64)), mixed_precision=st.one_of(st.none(), text),
                         fsdp_version=st.one_of(st.none(), st.integers(1, 2)), zero_stage=st.one_of(st.none(), st.integers(0, 3)))),
                     env=st.dictionaries(text, text, max_size=3), shm_bytes=maybe(st.integers(0, 2**40), none=False),
                     container=st.one_of(st.none(), text)),
    script=st.one_of(st.none(), st.builds(
        Script, path=text, trainers=st.lists(text, max_size=2).map(tuple), device_maps=st.lists(text, max_size=2).map(tuple),
        use_vllm=st.one_of(st.none(), st.booleans()), vllm_mode=st.one_of(st.none(), text), config_access=st.booleans(),
        gradient_checkpointing=st.one_of(st.none(), st.booleans()), use_cache=st.one_of(st.none(), st.booleans()),
        parse_error=st.one_of(st.none(), text))),
    declared=st.lists(text, max_size=2).map(tuple),
)


@settings(max_examples=150, deadline=None)
@given(facts_strategy)
def test_facts_survive_json_round_trip(facts):
    dumped = dump_facts(facts)
    assert load_facts(dumped) == facts
    assert dump_facts(load_facts(dumped)) == dumped
