import shutil
import sys
from pathlib import Path

import pytest

from compat.errors import UsageError
from compat.model.unknown import Unknown
from compat.sources.probe.launch import (
    NO_LAUNCHER,
    detect_container,
    infer_launcher,
    kept_env,
    probe_launch,
    read_accelerate_config,
)
from tests.sources.probe.probe_fakes import DATA

ACC = DATA / "accelerate"

SECRETS = {
    "HF_TOKEN": "hf_x", "WANDB_API_KEY": "k", "NCCL_IB_AUTH_TOKEN": "t", "VLLM_API_KEY": "k",
    "TORCH_SECRET_THING": "s", "ACCELERATE_PASSWORD": "p", "VLLM_PASSWD": "p", "NCCL_CREDENTIALS": "c",
    "TORCH_HUB_AUTH": "a", "VLLM_COOKIE": "c", "nccl_token_lower": "x",
}


def test_kept_variables_and_never_secrets():
    env = {"WORLD_SIZE": "8", "NCCL_P2P_DISABLE": "1", "CUDA_VISIBLE_DEVICES": "0,1", "HOME": "/root",
           "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "VLLM_USE_V1": "1", "PATH": "/bin", **SECRETS}
    kept = kept_env(env)
    assert kept == {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_P2P_DISABLE": "1",
                    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "VLLM_USE_V1": "1", "WORLD_SIZE": "8"}
    assert list(kept) == sorted(kept)


def test_secrets_never_reach_the_facts_json(monkeypatch, tmp_path):
    from compat.model.facts import dump_facts
    from compat.sources.probe import ProbeRequest, probe

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, f"sekrit-{value}-value")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    facts = probe(ProbeRequest(hardware=False, python=Path(sys.executable)), None)
    text = dump_facts(facts)
    assert "sekrit-" not in text
    for name in SECRETS:
        assert name not in text


@pytest.mark.parametrize("env, launcher", [
    ({"TORCHELASTIC_RUN_ID": "x", "LOCAL_RANK": "0"}, "torchrun"),
    ({"LOCAL_RANK": "0"}, "torchrun"),
    ({"ACCELERATE_MIXED_PRECISION": "bf16", "TORCHELASTIC_RUN_ID": "x", "LOCAL_RANK": "0"}, "accelerate"),
    ({"CROSS_RANK": "0", "LOCAL_RANK": "0"}, "deepspeed"),
])
def test_launcher_from_environment(env, launcher):
    assert infer_launcher(env) == launcher


def test_no_launcher_is_unknown_with_advice():
    result = infer_launcher({"HOME": "/root"})
    assert isinstance(result, Unknown) and result.reason == NO_LAUNCHER


def test_fsdp2_config():
    cfg = read_accelerate_config(ACC / "fsdp2.yaml", {})
    assert (cfg.distributed_type, cfg.num_processes, cfg.mixed_precision, cfg.fsdp_version, cfg.zero_stage) == (
        "FSDP", 8, "bf16", 2, None)


def test_zero3_config():
    cfg = read_accelerate_config(ACC / "zero3.yaml", {})
    assert (cfg.distributed_type, cfg.zero_stage, cfg.fsdp_version) == ("DEEPSPEED", 3, None)


def test_default_config_under_hf_home_json(tmp_path):
    (tmp_path / "accelerate").mkdir()
    shutil.copy(ACC / "default_config.json", tmp_path / "accelerate" / "default_config.yaml")
    cfg = read_accelerate_config(None, {"HF_HOME": str(tmp_path)})
    assert (cfg.distributed_type, cfg.num_processes, cfg.mixed_precision) == ("MULTI_GPU", 2, "no")
    assert cfg.path == str(tmp_path / "accelerate" / "default_config.yaml")


def test_no_default_config_is_none(tmp_path):
    assert read_accelerate_config(None, {"HF_HOME": str(tmp_path)}) is None


def test_broken_config_is_unknown_with_reason():
    cfg = read_accelerate_config(ACC / "broken.yaml", {})
    assert isinstance(cfg, Unknown) and "broken.yaml is not valid YAML or JSON" in cfg.reason


def test_named_config_that_does_not_exist_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        read_accelerate_config(tmp_path / "nope.yaml", {})


def test_container_hints(tmp_path):
    assert detect_container({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, tmp_path) == "kubernetes"
    assert detect_container({}, tmp_path) is None
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".containerenv").write_text("")
    assert detect_container({}, tmp_path) == "podman"
    (tmp_path / ".dockerenv").write_text("")
    assert detect_container({}, tmp_path) == "docker"


def test_container_from_cgroup(tmp_path):
    (tmp_path / "proc" / "1").mkdir(parents=True)
    (tmp_path / "proc" / "1" / "cgroup").write_text("0::/kubepods/besteffort/pod1234/abcd\n")
    assert detect_container({}, tmp_path) == "kubernetes"


def test_probe_launch_shm_unknown_when_missing(tmp_path):
    launch = probe_launch(None, environ={"HF_HOME": str(tmp_path)}, root=tmp_path, shm_path=str(tmp_path / "no-shm"))
    assert isinstance(launch.shm_bytes, Unknown) and "no-shm" in launch.shm_bytes.reason
    assert launch.accelerate is None and launch.container is None


def test_probe_launch_shm_measured(tmp_path):
    launch = probe_launch(None, environ={"HF_HOME": str(tmp_path)}, root=tmp_path, shm_path=str(tmp_path))
    assert isinstance(launch.shm_bytes, int) and launch.shm_bytes > 0
