#!/usr/bin/env bash
# Runs a locksim batch or sweep as N shards with GNU parallel, on this machine
# or across hosts over ssh, then merges them into the output of one unsharded
# run (README.md beside this file).
#
# Usage: examples/cluster/parallel.sh [-n N] [-S SSHLOGINS] [-d SHARD_DIR] [-b LOCKSIM]
#            -- batch|sweep ARGS... [-- MERGE_ARGS...]
#   -n N          shards (default 3)
#   -S SSHLOGINS  hosts for GNU parallel's --sshlogin, comma-separated, e.g.
#                 "8/alice@node1,8/alice@node2,:" (":" is this machine; "8/" caps
#                 the jobs on a host). Without -S the shards run here (local mode).
#                 Hosts need the same locksim binary and scenario files at the
#                 same path as here (a shared filesystem, e.g. NFS home), since
#                 the shards run in this folder (--workdir .).
#   -d SHARD_DIR  where the shard files go (default: cluster-shards/parallel)
#   -b LOCKSIM    the binary (default: build/locksim)
#   MERGE_ARGS    passed to `locksim merge`: --format F, --out FILE, --svg OUT.svg
# Exit: merge's status (0 all passed, 1 a run failed, 64.. an error).
set -u
n=3 logins="" dir=cluster-shards/parallel bin=build/locksim
while getopts "n:S:d:b:" o; do
  case $o in
    n) n=$OPTARG ;; S) logins=$OPTARG ;; d) dir=$OPTARG ;; b) bin=$OPTARG ;;
    *) sed -n '6,19p' "$0" >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
case "${1:-}" in batch|sweep) ;; *) echo "parallel.sh: give -- batch ARGS... or -- sweep ARGS..." >&2; exit 64 ;; esac
cmd=() merge=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmd+=("$1"); shift; done
[ $# -gt 0 ] && shift
merge=("$@")
command -v parallel >/dev/null || { echo "parallel.sh: GNU parallel is not installed (apt-get install parallel)" >&2; exit 69; }
mkdir -p "$dir" && rm -f "$dir"/shard-*.jsonl
# One shell line per shard. Exit 1 (an expectation failed) is an outcome,
# not a failure of the shard: merge reports it.
for k in $(seq 1 "$n"); do
  printf '%q ' "$bin" "${cmd[@]}" --shard "$k/$n" --out "$dir/shard-$k.jsonl"
  printf '; st=$?; [ $st -le 1 ] || exit $st\n'
done > "$dir/jobs.txt"
where=()
[ -n "$logins" ] && where=(--sshlogin "$logins" --workdir .)
parallel --will-cite --halt now,fail=1 "${where[@]}" < "$dir/jobs.txt" || {
  echo "parallel.sh: a shard failed (see above); nothing merged" >&2; exit 70; }
"$bin" merge "$dir"/shard-*.jsonl "${merge[@]}"
