#!/usr/bin/env bash
# make reality: every catalog scenario whose lock is a single-Redis algorithm
# (against a real redis-server; with servers=N, a primary and its replicas:
# redis-replicated), redlock (N real redis-servers), consensus (against a
# real etcd) or zookeeper and zookeeper-multi (against a real ZooKeeper),
# played by
# `locksim real --row` (which picks the backend), R times each;
# the table goes into docs/reality.md between its reality:begin and
# reality:end markers (the prose around them is kept). Refused scenarios are
# listed with the reason locksim gives. Last line:
#   reality: N scenarios x R repeats, K differ
# (K: runs whose real verdict is not the simulated one).
# Usage: mk/reality.sh LOCKSIM_BIN [REPEATS]
set -u
bin=$1; reps=${2:-5}
cd "$(dirname "$0")/.."
doc=docs/reality.md
rows=$(mktemp); refused=$(mktemp)
n=0; k=0; other=0
# The scenarios run REALITY_JOBS at a time (default: the number of CPUs): a
# real run mostly waits for its own timeline, and each claims its own ports
# (real/redis_srv.c), so runs side by side do not meet; their outputs are
# read back in catalog order. Not more than the CPUs: as root a run and its
# servers play at SCHED_RR (real/real.c, rt_begin), and threads of one
# real-time priority do not preempt each other: with 3 runs on 2 CPUs,
# zookeeper-session-survives-in-bucket (2 ms of real time between A's
# resume and its session's expiry tick) came out UNSAFE once in 5, and 0 in
# 10 alone.
jobs=${REALITY_JOBS:-$(nproc 2>/dev/null || echo 2)}
outs=$(mktemp -d); trap 'rm -rf "$rows" "$refused" "$doc.new" "$outs"' EXIT
i=0; running=0
for f in scenarios/*.lsim; do
  grep -qE '^lock (lease|fenced-lease|setnx|setnx-expire|lease-renew|consensus|redlock|zookeeper|zookeeper-multi)( |$)' "$f" || continue
  i=$((i + 1)); echo "$f" > "$outs/$i.name"
  ( "$bin" real "$f" --repeat "$reps" --row > "$outs/$i.out" 2>/dev/null; echo $? > "$outs/$i.rc" ) &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for j in $(seq 1 "$i"); do
  f=$(cat "$outs/$j.name"); out=$(cat "$outs/$j.out"); rc=$(cat "$outs/$j.rc")
  if [ "$rc" = 69 ] && [ -n "$out" ]; then echo "$out" >> "$refused"; continue; fi
  # 1: a real verdict differed (counted below); anything else is a failure
  if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
    echo "reality: $f: locksim real exited $rc"; "$bin" real "$f" --repeat 1 2>&1 | tail -3
    echo "reality: FAILED"; exit 1
  fi
  echo "$out" | tee -a "$rows"
  n=$((n + 1))
  d=$(echo "$out" | awk -F' \\| ' '{print $5}'); k=$((k + d))
  o=$(echo "$out" | awk -F' \\| ' '{print $6}'); other=$((other + o))
done
{
  sed -n '1,/<!-- reality:begin -->/p' "$doc"
  echo
  echo "Made by \`make reality\` ($(date -u +%Y-%m-%d), redis-server $(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/'), etcd $(etcd --version 2>/dev/null | sed -n 's/^etcd Version: //p'), zookeeper $(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null | sed 's/-.*//'), $reps runs each)."
  echo
  echo "| scenario | backend | simulated | real verdicts | verdict differs | any difference | scale | takeovers: real (simulated), scenario time |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$rows"
  echo
  echo "Refused ($(wc -l < "$refused") scenarios): what the redis, redis-replicated, redlock, etcd and zookeeper backends cannot make real, in locksim's words."
  echo
  echo "| scenario | algorithm | why |"
  echo "|---|---|---|"
  cat "$refused"
  echo
  echo "reality: $n scenarios x $reps repeats, $k differ ($other runs with any difference, takeover times included)"
  echo
  sed -n '/<!-- reality:end -->/,$p' "$doc"
} > "$doc.new" && mv "$doc.new" "$doc"
echo "reality: refused $(wc -l < "$refused") scenarios (listed in $doc)"
echo "reality: $n scenarios x $reps repeats, $k differ"
