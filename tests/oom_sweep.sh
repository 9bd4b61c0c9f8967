#!/usr/bin/env bash
# Out of memory, swept over whole commands (issue 19, item 2): each command is
# run once to record its output and to count its allocations (per process,
# workers too: build/oom_shim.so, LOCKSIM_OOM_COUNT=1), then again with its
# N-th allocation failing (LOCKSIM_OOM_AT=N) for every N from 1 to the largest
# count (every STRIDE-th N where a command allocates thousands of times).
# Each outcome is one of:
#   same    stdout, the output file and the exit status as without the shim
#   oom     exit 70 with "out of memory" (or strerror's "Cannot allocate memory") on
#           stderr or in the report (batch and sweep report a run's error there)
#   crash   killed by a signal
#   code    another exit status (or 70 without the message)
#   wrong   the expected exit status but other output (exit 0 or not)
# Only same and oom pass. Prints a table per command and closes with
# "tests: N passed, M failed" (one test per command).
# Usage: tests/oom_sweep.sh [LOCKSIM_BIN [SHIM.so]]
#   OOM_JOBS=2 runs two N at once; OOM_ONLY="run diff" sweeps only those rows;
#   OOM_SHOW=5 failures shown per command.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "${1:-$root/build/locksim}")" && pwd)/$(basename "${1:-$root/build/locksim}")
shim=$(cd "$(dirname "${2:-$root/build/oom_shim.so}")" && pwd)/$(basename "${2:-$root/build/oom_shim.so}")
jobs=${OOM_JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# Inputs: two scenarios, two traces that differ, two shards of one batch.
cp "$root/scenarios/gc-pause-outlives-lease.lsim" s.lsim
cp "$root/scenarios/ttl-with-headroom.lsim" t.lsim
"$bin" run s.lsim --no-timeline --trace a.jsonl >/dev/null
"$bin" run s.lsim --no-timeline --seed 2 --trace b.jsonl >/dev/null
"$bin" batch s.lsim t.lsim --seeds 1..3 --shard 1/2 --out s1.jsonl >/dev/null
"$bin" batch s.lsim t.lsim --seeds 1..3 --shard 2/2 --out s2.jsonl >/dev/null

# name|stride|output file compared too ('-' none)|arguments
cmds=(
  "run|1|-|run s.lsim --no-color"
  "run-json|1|-|run s.lsim --format json"
  "render-png|1|x.png|render s.lsim -o x.png"
  "check|${OOM_CHECK_STRIDE:-7}|-|check $root/scenarios/"
  "batch-jobs2|1|-|batch s.lsim t.lsim --seeds 1..2 --jobs 2"
  "batch-junit|1|-|batch s.lsim t.lsim --format junit --jobs 1"
  "sweep|1|-|sweep s.lsim --vary lock.ttl=5s..15s/5s --jobs 2"
  "merge|1|-|merge s1.jsonl s2.jsonl"
  "check-trace|1|-|check-trace a.jsonl"
  "diff|1|-|diff a.jsonl b.jsonl"
  "explore|${OOM_EXPLORE_STRIDE:-5}|-|explore s.lsim --budget 20"
)

# One try: N, then the command's fields. Prints "N class rc".
try_one() {
  local n=$1 name=$2 out=$3; shift 3
  local d="$work/$name.$n"
  mkdir -p "$d" && cd "$d" || return
  ln -sf "$work"/*.lsim "$work"/*.jsonl . 2>/dev/null
  LD_PRELOAD=$shim LOCKSIM_OOM_AT=$n NO_COLOR=1 "$bin" "$@" >stdout 2>stderr </dev/null
  local rc=$? cls
  local base="$work/$name.base"
  # explore prints wall-clock figures (in 0.004s, 1288 runs/s): compared
  # with them masked, in both outputs.
  if [ "$name" = explore ]; then
    sed -E 's/[0-9]+(\.[0-9]+)?s\b/T/g; s/[0-9]+ runs\/s/R runs\/s/g' stdout > stdout.n && mv stdout.n stdout
    [ -f "$base/stdout.masked" ] ||
      sed -E 's/[0-9]+(\.[0-9]+)?s\b/T/g; s/[0-9]+ runs\/s/R runs\/s/g' "$base/stdout" > "$base/stdout.masked"
    base_out="$base/stdout.masked"
  else
    base_out="$base/stdout"
  fi
  if [ $rc -gt 128 ] && [ $rc -ne 130 ]; then cls=crash
  elif [ $rc -eq "$(cat "$base/rc")" ] && cmp -s stdout "$base_out" &&
       { [ "$out" = - ] || cmp -s "$out" "$base/$out"; }; then cls=same
  elif [ $rc -eq 70 ] && cat stdout stderr | grep -qiE "out of memory|cannot allocate memory"; then cls=oom
  elif [ $rc -eq "$(cat "$base/rc")" ] || [ $rc -eq 0 ]; then cls=wrong
  else cls=code
  fi
  echo "$n $cls $rc"
  if [ "$cls" = same ] || [ "$cls" = oom ]; then cd "$work" && rm -rf "$d"; fi
}
export -f try_one
export work bin shim

passed=0; failed=0
printf '%-12s %7s %6s %6s %6s %6s %6s %6s\n' command N-tried same oom crash code wrong allocs
for c in "${cmds[@]}"; do
  IFS='|' read -r name stride out args <<<"$c"
  case " ${OOM_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
  read -ra argv <<<"$args"
  base="$work/$name.base"
  mkdir -p "$base" && cd "$base" || exit 1
  ln -sf "$work"/*.lsim "$work"/*.jsonl .
  NO_COLOR=1 "$bin" "${argv[@]}" >stdout 2>stderr </dev/null; echo $? >rc
  LD_PRELOAD=$shim LOCKSIM_OOM_COUNT=1 NO_COLOR=1 "$bin" "${argv[@]}" >/dev/null 2>count </dev/null
  max=$(sed -n 's/^oom-shim: pid [0-9]*: \([0-9]*\) allocations$/\1/p' count | sort -n | tail -1)
  cd "$work" || exit 1
  seq 1 "$stride" "${max:-0}" |
    xargs -P "$jobs" -I{} bash -c 'try_one "$@"' _ {} "$name" "$out" "${argv[@]}" >"$name.res"
  tried=$(wc -l <"$name.res")
  cnt() { awk -v k="$1" '$2 == k' "$name.res" | wc -l; }
  s=$(cnt same); o=$(cnt oom); cr=$(cnt crash); co=$(cnt code); w=$(cnt wrong)
  printf '%-12s %7s %6s %6s %6s %6s %6s %6s\n' "$name" "$tried/$stride" "$s" "$o" "$cr" "$co" "$w" "${max:-?}"
  if [ $((cr + co + w)) -eq 0 ] && [ "$tried" -gt 0 ]; then passed=$((passed + 1)); else
    failed=$((failed + 1))
    sort -n "$name.res" | awk '$2 != "same" && $2 != "oom"' | head -${OOM_SHOW:-5} | while read -r n cls rc; do
      echo "  $name N=$n: $cls (exit $rc): $(head -c 300 "$work/$name.$n/stderr" | tr '\n' ' ')"
    done
  fi
done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
