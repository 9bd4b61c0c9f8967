#!/usr/bin/env bash
# Batch throughput over the catalog: `locksim batch DIR --seeds 1..N --format
# jsonl --out /dev/null` (no trace files), runs per second at --jobs 1 and
# --jobs 2, best of R rounds (bench/README.md, "Batch throughput").
# Usage: bench/batch.sh LOCKSIM_BIN [SCENARIO_DIR] [SEEDS] [ROUNDS]
set -eu
bin=${1:-build/locksim}
dir=${2:-scenarios}
seeds=${3:-200}
rounds=${4:-3}
nfiles=$(find "$dir" -name '*.lsim' | wc -l)
runs=$((nfiles * seeds))
echo "batch: $nfiles scenarios x $seeds seeds = $runs runs, jsonl to /dev/null, best of $rounds"
for jobs in 1 2; do
  best=""
  for _ in $(seq "$rounds"); do
    t0=$(date +%s.%N)
    "$bin" batch "$dir" --seeds "1..$seeds" --format jsonl --out /dev/null --jobs "$jobs" || [ $? -eq 1 ]
    t1=$(date +%s.%N)
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
  done
  awk -v j="$jobs" -v n="$runs" -v t="$best" 'BEGIN { printf "  --jobs %d: %8.0f runs/s  (%.3f s)\n", j, n / t, t }'
done
