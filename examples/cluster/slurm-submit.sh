#!/usr/bin/env bash
# Submits the shard array (N tasks) and the merge step that waits for it.
# Usage: examples/cluster/slurm-submit.sh [N]   (from the repository folder;
# LOCKSIM_ARGS, MERGE_ARGS, SHARD_DIR and LOCKSIM are passed to the jobs)
set -eu
n=${1:-8}
here=$(dirname "$0")
dir=${SHARD_DIR:-cluster-shards}
# A shard of an earlier array would be merged with this one's: clear them.
mkdir -p "$dir" && rm -f "$dir"/shard-*.jsonl
jid=$(sbatch --parsable --array="1-$n" "$here/slurm-shard.sbatch")
sbatch --dependency="afterok:${jid%%;*}" "$here/slurm-merge.sbatch"
