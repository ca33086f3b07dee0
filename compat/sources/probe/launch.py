"""How training will be started: accelerate config, launcher variables, /dev/shm, container."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import AccelerateConfig, Launch, Launcher
from compat.model.unknown import Unknown
from compat.redact import redact_value
from compat.regular_file import MIB, NotRegularFile, decode_text, read_regular

KEPT_NAMES = frozenset({
    "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH", "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS",
    "CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "NVIDIA_DISABLE_REQUIRE",  # what NVIDIA's CUDA images declare
})
KEPT_PREFIXES = ("NCCL_", "ACCELERATE_", "TORCH_", "VLLM_", "SLURM_", "CUDA_", "HF_")
NO_LAUNCHER = "not running under a launcher; declare it with --launcher"


def kept_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that matter to a launch, sorted. A secret is never kept: a secret-looking
    name is dropped, credentials inside a value are masked and a token-looking value is replaced
    (compat.redact)."""
    kept = {}
    for name in sorted(environ):
        if name in KEPT_NAMES or name.startswith(KEPT_PREFIXES):
            value = redact_value(name, environ[name])
            if value is not None:
                kept[name] = value
    return kept


def infer_launcher(environ: Mapping[str, str]) -> Launcher | Unknown:
    # accelerate launch runs torchrun underneath, so its own variables are checked first.
    if any(name.startswith("ACCELERATE_") for name in environ if name != "ACCELERATE_CONFIG_FILE"):
        return Launcher.ACCELERATE
    if any(name.startswith(("DEEPSPEED_", "DLTS_")) for name in environ) or "CROSS_RANK" in environ:
        return Launcher.DEEPSPEED
    if "TORCHELASTIC_RUN_ID" in environ or "LOCAL_RANK" in environ:
        return Launcher.TORCHRUN
    if "SLURM_STEP_ID" in environ and "SLURM_PROCID" in environ:
        return Launcher.SRUN  # inside an srun step (an salloc shell has a job but no step)
    return Unknown(reason=NO_LAUNCHER)


def default_accelerate_config(environ: Mapping[str, str]) -> Path:
    home = environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home).expanduser() / "accelerate" / "default_config.yaml"


def read_accelerate_config(path: Path | None, environ: Mapping[str, str]) -> AccelerateConfig | None | Unknown:
    """The config in effect: an explicit file must exist; a missing default means none."""
    explicit = path is not None
    path = path if path is not None else default_accelerate_config(environ)
    try:
        text = decode_text(read_regular(path, limit=MIB))  # by its mark or NULs, as -r and --facts
    except FileNotFoundError:
        if explicit:
            raise UsageError(f"accelerate config {path} does not exist") from None
        return None
    except NotRegularFile as exc:
        if explicit:
            raise UsageError(f"accelerate config {path} is {exc.strerror}") from None
        return Unknown(reason=f"cannot read {path}: {exc.strerror}")
    except (OSError, UnicodeDecodeError) as exc:
        return Unknown(reason=f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")
    return parse_accelerate_config(text, path=str(path))


def parse_accelerate_config(text: str, *, path: str) -> AccelerateConfig | Unknown:
    import yaml

    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:  # a broken file is a fact, not a crash
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Unknown(reason=f"{path} is not valid YAML or JSON: {first}")
    if not isinstance(data, dict):
        return Unknown(reason=f"{path} does not hold a mapping of settings")
    fsdp = fsdp_config if isinstance(fsdp_config := data.get("fsdp_config"), dict) else {}
    deepspeed = ds_config if isinstance(ds_config := data.get("deepspeed_config"), dict) else {}
    return AccelerateConfig(
        path=path,
        distributed_type=_str(data.get("distributed_type")),
        num_processes=_int(data.get("num_processes")),
        mixed_precision=_str(data.get("mixed_precision")),
        fsdp_version=_int(fsdp.get("fsdp_version")),
        zero_stage=_int(deepspeed.get("zero_stage")),
    )


def shm_bytes(path: str = "/dev/shm") -> int | Unknown:
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return Unknown(reason=f"cannot stat {path}: {exc.strerror or exc}")
    return st.f_frsize * st.f_blocks


def detect_container(environ: Mapping[str, str], root: Path = Path("/")) -> str | None:
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if (root / ".dockerenv").exists():
        return "docker"
    if (root / "run" / ".containerenv").exists():
        return "podman"
    try:
        cgroup = (root / "proc" / "1" / "cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    runtimes = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("containerd", "containerd"), ("lxc", "lxc"))
    for word, name in runtimes:
        if word in cgroup:
            return name
    return None


def probe_launch(
    accelerate_config: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
    root: Path = Path("/"),
    shm_path: str = "/dev/shm",
) -> Launch:
    env = dict(os.environ if environ is None else environ)
    return Launch(
        launcher=infer_launcher(env),
        accelerate=read_accelerate_config(accelerate_config, env),
        env=kept_env(env),
        shm_bytes=shm_bytes(shm_path),
        container=detect_container(env, root),
    )


def _str(value: object) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None
