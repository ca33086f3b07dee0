"""One rank of `compat smoke`'s launched train run under torchrun with the user's accelerate config:
`python accelerate_env.py ACCELERATE-ARGS -- STAGE [ARGS]`.

`accelerate launch` turns a config file into variables its ranks start with (ACCELERATE_MIXED_PRECISION,
ACCELERATE_USE_FSDP, FSDP_*, ACCELERATE_USE_DEEPSPEED, ...), which `Accelerator()` reads; torchrun reads no config.
This script asks the installed accelerate's own launch code for them, as `accelerate launch ACCELERATE-ARGS` would
compute them, sets them and replaces itself with `child.py STAGE ARGS`: the trainer starts in a fresh interpreter
that has them from its first import (OMP_NUM_THREADS, CUDA_VISIBLE_DEVICES). Run by path in the judged interpreter
like child.py: the standard library, child_steps.py and accelerate, nothing of compat.
"""

from __future__ import annotations

import os
import sys

# Run by path, child_steps is a module of the script's folder; imported as compat's (the tests), a sibling.
try:
    from child_steps import FAILED, Skip, _version, step  # type: ignore[import-not-found,no-redef,unused-ignore]
except ImportError:
    from compat.sources.smoke.child_steps import FAILED, Skip, _version, step

TORCHRUN_SET = frozenset({"MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                          "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE", "TORCHELASTIC_RUN_ID"})
"""What torchrun set for this rank: accelerate's single-process launcher writes MASTER_* defaults that must not win."""


def accelerate_environment(arguments: list[str], environ: dict[str, str]) -> dict[str, str]:
    """The variables `accelerate launch ARGUMENTS script` would start its processes with and `environ` lacks, computed
    by the installed accelerate's launch code with the choice of launcher `launch_command` makes. Skip where this
    accelerate has no such code; a config accelerate rejects raises its own error."""
    try:
        from accelerate.commands.launch import _validate_launch_command, launch_command_parser
        from accelerate.utils.launch import (
            prepare_deepspeed_cmd_env,
            prepare_multi_gpu_env,
            prepare_simple_launcher_cmd_env,
        )
    except ImportError as exc:
        raise Skip(f"accelerate {_version('accelerate')} has no launch environment code to apply the config "
                   f"with ({exc}); the run is torchrun's plain one") from None
    args = launch_command_parser().parse_args([*arguments, "child.py"])
    args, defaults, precision_from_config = _validate_launch_command(args)
    if args.use_deepspeed and not args.cpu:
        fields = [*(defaults.deepspeed_config if defaults is not None else ()),
                  *(["mixed_precision"] if precision_from_config else [])]
        args.deepspeed_fields_from_accelerate_config = ",".join(fields)
        env = prepare_deepspeed_cmd_env(args)[1]
    elif (args.use_fsdp or args.use_megatron_lm or args.multi_gpu) and not args.cpu:
        env = prepare_multi_gpu_env(args)
    else:
        env = prepare_simple_launcher_cmd_env(args)[1]
    return {k: v for k, v in env.items() if environ.get(k) != v and k not in TORCHRUN_SET}


def main(argv: list[str]) -> int:
    if "--" not in argv:
        sys.stderr.write("usage: accelerate_env.py ACCELERATE-ARGS -- STAGE [ARGS]\n")
        return 2
    split = argv.index("--")
    with step(f"torchrun x{os.environ.get('WORLD_SIZE', '?')}: accelerate config") as detail:
        env = accelerate_environment(argv[:split], dict(os.environ))
        os.environ.update(env)
        detail.append(", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "no variable to set")
    if FAILED:
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
    os.execv(sys.executable, [sys.executable, child, *argv[split + 1:]])  # this rank's pid, torchrun's pipes


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
