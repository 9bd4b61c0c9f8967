#!/usr/bin/env bash
# Submits the shard array (N tasks) and the merge step that waits for it.
# Usage: examples/cluster/slurm-submit.sh [N]   (from the repository folder;
# LOCKSIM_ARGS, MERGE_ARGS, SHARD_DIR and LOCKSIM are passed to the jobs)
set -eu
n=${1:-8}
here=$(dirname "$0")
mkdir -p "${SHARD_DIR:-cluster-shards}"
jid=$(sbatch --parsable --array="1-$n" "$here/slurm-shard.sbatch")
sbatch --dependency="afterok:${jid%%;*}" "$here/slurm-merge.sbatch"
