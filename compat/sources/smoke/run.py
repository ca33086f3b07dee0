"""The fetch side of `compat smoke`: a temp dir, and each stage's child processes of the judged interpreter.

Every child runs in the temp dir with HOME, the caches and TMPDIR pointed into it and the hubs set
offline, so nothing is downloaded and nothing outside the temp dir is written; the temp dir is
removed afterwards. A child runs in its own session and is killed, with everything it started, at
its time bound. What the children printed is parsed by compat.smoke.parse (pure).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import Launcher
from compat.model.smoke import ChildOutput, Stage, StagePlan
from compat.regular_file import open_regular

CHILD = Path(__file__).with_name("child.py")
"""The script each stage runs by path (it imports nothing of compat)."""

ACCELERATE_ENV = Path(__file__).with_name("accelerate_env.py")
"""Under torchrun with the user's accelerate config: each rank runs it by path; it sets the variables accelerate's
launch code computes from the config and replaces itself with the child."""

KEEP = 256 * 1024
"""Characters of each stream kept (the end): enough for explain, bounded for a chatty library."""

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "WANDB_DISABLED": "true",
    "WANDB_MODE": "disabled",
    "DISABLE_MLFLOW_INTEGRATION": "TRUE",
    "COMET_MODE": "DISABLED",
    "DO_NOT_TRACK": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ written into the judged environment
    "PYTHONUNBUFFERED": "1",
}
"""Set in every child: nothing is fetched, nothing is reported home, nothing is written beside the packages."""

_HOMES = {
    "HOME": "home",
    "XDG_CACHE_HOME": "cache",
    "XDG_CONFIG_HOME": "config",
    "HF_HOME": "cache/huggingface",
    "HF_DATASETS_CACHE": "cache/datasets",
    "TRITON_CACHE_DIR": "cache/triton",
    "TORCHINDUCTOR_CACHE_DIR": "cache/inductor",
    "TORCH_HOME": "cache/torch",
    "VLLM_CACHE_ROOT": "cache/vllm",
    "CUDA_CACHE_PATH": "cache/nv",
    "MPLCONFIGDIR": "cache/matplotlib",
    "TMPDIR": "tmp",
}
"""Where each tool writes, inside the temp dir."""

_DROP = ("PYTHONHOME", "PYTHONSTARTUP", "ACCELERATE_CONFIG_FILE", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
         "MASTER_PORT")
"""Removed: a stray launcher variable would make a child think it is one rank of a job that does not exist."""


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A temp dir for the whole run, removed afterwards whatever happened."""
    root = Path(tempfile.mkdtemp(prefix="compat-smoke-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def child_env(base: Mapping[str, str], root: Path, *, bytecode: bool = False) -> dict[str, str]:
    """The environment of every child: `base` (this process's) with the homes in `root` and the hubs offline.
    `bytecode`: the children may write `__pycache__` into the judged environment (one compat made and removes)."""
    env = {k: v for k, v in base.items() if k not in _DROP}
    for name, sub in _HOMES.items():
        path = root / sub
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.update(OFFLINE)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def commands(python: str, plan: StagePlan, *, port: int | None = None) -> list[tuple[str, list[str]]]:
    """The child processes of a stage: (what the report calls it, argv). Collective runs under torchrun;
    train runs once plainly and, when asked, once more under its launcher (torchrun or `accelerate launch`)
    on `plan.processes`. `port`: the rendezvous port `accelerate launch` is given (torchrun's --standalone finds
    its own)."""
    child = str(CHILD)
    stage = plan.stage.value
    if plan.stage is Stage.COLLECTIVE:
        argv = [python, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={plan.processes}",
                child, stage]
        return [(f"torchrun --nproc_per_node={plan.processes} child.py {stage}", argv)]
    if plan.stage is Stage.SERVE:  # one child per mode: a vLLM engine holds its GPU memory until its process ends
        return [(f"python child.py {stage} {mode}", [python, child, stage, mode]) for mode in plan.args]
    runs = [(f"python child.py {' '.join([stage, *plan.args])}", [python, child, stage, *plan.args])]
    launch = plan.launch
    if plan.stage is Stage.TRAIN and launch is not None and launch.runs:
        first = next((a for a in plan.args if not a.startswith("--")), "sft")
        tail = [stage, first, "--launched", *([f"--distributed={launch.distributed}"] if launch.distributed else [])]
        torchrun = launch.launcher == Launcher.TORCHRUN.value
        if torchrun:  # named so the child's steps say which launcher started them
            tail.append(f"--launcher={Launcher.TORCHRUN.value}")
        module = "torch.distributed.run" if torchrun else "accelerate.commands.launch"
        script = [child]
        if torchrun and launch.accelerate_arguments:  # accelerate_env.py ARGS -- STAGE ...: the config's variables first
            script = [str(ACCELERATE_ENV), *launch.accelerate_arguments, "--"]
        # accelerate's default port is 29500 for every run on the machine: a job already there, or another smoke,
        # could take it between accelerate's check and its bind, and the ranks would wait on the wrong job's store.
        where = [f"--main_process_port={port}"] if port is not None and not torchrun else []
        argv = [python, "-m", module, *launch.arguments, *where, *script, *tail]
        shown = " ".join([Path(script[0]).name, *script[1:]])
        runs.append((f"{launch.launcher} {' '.join(launch.arguments)} {shown} {' '.join(tail)}", argv))
    return runs


def run_child(label: str, argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float) -> ChildOutput:
    """Run one child to its end or its time bound; never raises on the child's failure."""
    cwd.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        return ChildOutput(command=label, returncode=None, stdout="", stderr="", seconds=0.0,
                           error=f"cannot run {argv[0]}: {exc.strerror or exc}")
    timed_out = False
    try:
        out, err = proc.communicate(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_tree(proc.pid)
        try:
            out, err = proc.communicate(timeout=_DRAIN_SECONDS)
        except subprocess.TimeoutExpired:  # something that left the tree still holds the pipes: stop waiting on it
            proc.kill()
            proc.wait()
            out, err = "", "(its output was lost: a process it started kept the pipes open past its kill)"
    except BaseException:
        _kill_tree(proc.pid)  # interrupted: leave no child behind
        proc.wait()
        raise
    return ChildOutput(command=label, returncode=None if timed_out else proc.returncode, stdout=out[-KEEP:],
                       stderr=err[-KEEP:], seconds=round(time.monotonic() - started, 3), timed_out=timed_out)


_DRAIN_SECONDS = 5.0
"""How long the output of a killed child is read before it is given up."""


def _kill_tree(pid: int) -> None:
    """Kill the child's process group and every descendant, also those that started a session of their own
    (torchrun's ranks): a rank left alive holds the output pipes open and the bound would not hold. The tree is
    stopped before it is read, and read again until nothing new appears: a process that forks between the reading and
    the kill would otherwise outlive it."""
    _send(os.killpg, pid, signal.SIGSTOP)
    stopped: set[int] = set()
    while new := set(_descendants(pid)) - stopped:
        for child in new:
            _send(os.kill, child, signal.SIGSTOP)
        stopped |= new
    _send(os.killpg, pid, signal.SIGKILL)
    for child in stopped:
        _send(os.kill, child, signal.SIGKILL)


def _send(send: Callable[[int, int], None], pid: int, signum: int) -> None:
    """`os.kill` or `os.killpg`, for a process that may already be gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        send(pid, signum)


def _descendants(pid: int) -> list[int]:
    """Every process under `pid`, read from /proc (empty where /proc has no children files)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def run_stage(python: str, plan: StagePlan, *, root: Path, env: Mapping[str, str],
              deadline: float) -> tuple[ChildOutput, ...]:
    """Each child of the stage in its own folder under `root`, bounded by the stage's time and the run's deadline."""
    outputs: list[ChildOutput] = []
    stage_end = min(deadline, time.monotonic() + plan.seconds)
    port = free_port() if plan.launch is not None else None  # only a launched run rendezvouses on one
    for i, (label, argv) in enumerate(commands(python, plan, port=port)):
        left = stage_end - time.monotonic()
        if left < 1.0:
            outputs.append(ChildOutput(command=label, returncode=None, stdout="", stderr="", seconds=0.0, timed_out=True))
            break
        outputs.append(run_child(label, argv, cwd=root / f"{plan.stage.value}-{i}", env=env, timeout=left))
    return tuple(outputs)


def free_port() -> int:
    """A TCP port nothing on this machine listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch_file(path: Path, option: str) -> str:
    """A launch settings file the launched run reads from its own working directory: absolute, and a regular file.

    Opened here once (compat.regular_file): a FIFO or a device is refused with what it is before a child blocks
    on it, and the file is this run's input, so `-o` naming it is refused instead of replacing it."""
    try:
        open_regular(path).close()
    except OSError as exc:
        raise UsageError(f"{option} {path}: {exc.strerror or exc}") from exc
    return str(path.resolve())


def this_environment() -> dict[str, str]:
    """This process's environment, the base of every child's."""
    return dict(os.environ)
