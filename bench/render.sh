#!/usr/bin/env bash
# Whole-process cost of a headless picture (bench/README.md, "5. Headless
# PNG"): `locksim render SCENARIO -o x.png` against `-o x.svg` and `locksim
# run SCENARIO --no-timeline` (the process floor of the same binary), each
# run RUNS times as a fresh process after 5 warm-up runs, in ROUNDS rounds
# that take the three commands in turn. Prints, per command, the wall time
# per process (fork to exit, bash's $EPOCHREALTIME around each run: min and
# median over every run) and the CPU time per process (user + system of the
# children, bash's `times`), then the shared libraries each picture module
# loads. The PNG must be byte-identical in every run (cmp), else it fails.
# Figures only: nothing here fails on speed.
# Usage: bench/render.sh [LOCKSIM_BIN] [SCENARIO] [RUNS] [ROUNDS]
set -eu
bin=${1:-build/locksim}
scen=${2:-scenarios/gc-pause-outlives-lease.lsim}
runs=${3:-40}
rounds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(dirname "$bin")

cmds=("render $scen -o $tmp/x.png" "render $scen -o $tmp/x.svg" "run $scen --no-timeline")
names=("render -o x.png" "render -o x.svg" "run --no-timeline")

# Children's user + system seconds so far, as one number, from bash's
# `times` run in this shell (not in a $(...) subshell, which has no
# children of its own): its second line, "XmY.YYYs XmZ.ZZZs".
child_cpu() {
    times >"$tmp/times"
    sed -n 2p "$tmp/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.6f\n", s }'
}

"$bin" render "$scen" -o "$tmp/ref.png" >/dev/null
echo "render bench: $bin, $scen, $runs runs x $rounds rounds per command; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 0 1 2; do : >"$tmp/wall$i"; echo 0 >"$tmp/cpu$i"; done
for _ in $(seq "$rounds"); do
  for i in 0 1 2; do
    read -r -a argv <<<"${cmds[$i]}"
    for _ in 1 2 3 4 5; do "$bin" "${argv[@]}" >/dev/null; done
    child_cpu >"$tmp/c0"
    for _ in $(seq "$runs"); do
      t0=$EPOCHREALTIME
      "$bin" "${argv[@]}" >/dev/null
      t1=$EPOCHREALTIME
      echo "$t0 $t1" >>"$tmp/wall$i"
    done
    child_cpu >"$tmp/c1"
    awk -v a="$(cat "$tmp/cpu$i")" -v b="$(cat "$tmp/c0")" -v c="$(cat "$tmp/c1")" 'BEGIN { printf "%.6f\n", a + c - b }' >"$tmp/cpu$i"
    if [ "$i" = 0 ] && ! cmp -s "$tmp/ref.png" "$tmp/x.png"; then
      echo "render bench: the PNG differs between runs (determinism broken)" >&2
      exit 1
    fi
  done
done
n=$((runs * rounds))
printf '  %-20s %9s %9s %9s\n' command "min ms" "median ms" "CPU ms"
for i in 0 1 2; do
  awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' "$tmp/wall$i" | sort -n >"$tmp/sorted$i"
  min=$(head -n 1 "$tmp/sorted$i")
  med=$(sed -n "$(((n + 1) / 2))p" "$tmp/sorted$i")
  cpu=$(awk -v c="$(cat "$tmp/cpu$i")" -v n="$n" 'BEGIN { printf "%.2f", c * 1000 / n }')
  printf '  %-20s %9s %9s %9s\n' "${names[$i]}" "$min" "$med" "$cpu"
done
for m in locksim-png.so locksim-gfx.so; do
  [ -e "$dir/$m" ] && echo "  $m loads $(ldd "$dir/$m" | grep -c '=>') shared libraries"
done
echo "  PNG: $(wc -c <"$tmp/ref.png") bytes, the same in every run"
