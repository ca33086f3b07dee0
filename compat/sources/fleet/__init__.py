"""Facts of every member of a job, gathered through the engines the cluster already runs.

`directory` reads saved snapshots (one file per node: Slurm, Kubernetes, a previous run),
`slurm` runs `compat facts` once per node with srun, `ray` runs a facts task pinned to every
alive node, and `torch_dist` gathers every rank's facts over torch.distributed (with an optional
all-reduce smoke test). Each returns `Member` records; a member that hangs or dies becomes a
TIMED_OUT or FAILED member, never an exception or a hang.
"""
