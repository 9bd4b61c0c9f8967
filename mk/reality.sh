#!/usr/bin/env bash
# make reality: every catalog scenario whose lock is a single-Redis algorithm
# (against a real redis-server), consensus (against a real etcd) or
# zookeeper and zookeeper-multi (against a real ZooKeeper), played by
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
rows=$(mktemp); refused=$(mktemp); trap 'rm -f "$rows" "$refused" "$doc.new"' EXIT
n=0; k=0; other=0
for f in scenarios/*.lsim; do
  grep -qE '^lock (lease|fenced-lease|setnx|setnx-expire|lease-renew|consensus|zookeeper|zookeeper-multi)( |$)' "$f" || continue
  out=$("$bin" real "$f" --repeat "$reps" --row 2>/dev/null); rc=$?
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
  echo "Refused ($(wc -l < "$refused") scenarios): what the redis, etcd and zookeeper backends cannot make real, in locksim's words."
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
